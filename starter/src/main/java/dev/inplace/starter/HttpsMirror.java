package dev.inplace.starter;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * A release's files under an https location (a release page's download URL, or a mirror served over
 * https). The catalogue's source is {@code <location>/<file>}; the worker fetches it from there. The
 * same rules as the worker's apply while measuring, so a catalogue written here is one the worker
 * accepts: https only, no user info, query or fragment, and the location's host and every redirect
 * hop among {@code allowedHosts}, checked before each request.
 */
final class HttpsMirror implements ReleaseMirror {
  /** Redirects followed per file, as the worker's download. */
  static final int MAX_REDIRECTS = 5;

  private final URI base;
  private final Set<String> allowedHosts;
  private final HttpClient http;

  HttpsMirror(String location, Set<String> allowedHosts, HttpClient http) {
    URI uri;
    try {
      uri = new URI(location);
    } catch (URISyntaxException e) {
      throw new CliException("--from " + location + " is not a valid URL: " + e.getReason());
    }
    if (!"https".equalsIgnoreCase(uri.getScheme())) {
      throw new CliException("--from " + location + ": the worker fetches artifacts over https only");
    }
    if (uri.getHost() == null || uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
      throw new CliException("--from " + location + " must name a host and carry no user info, query string or fragment"
          + " (the URL is copied into every run's history and logs)");
    }
    this.allowedHosts = Set.copyOf(allowedHosts);
    String host = uri.getHost().toLowerCase(Locale.ROOT);
    if (!hostAllowed(host)) {
      throw new CommandRefused("host " + host + " is not in the allowed artifact hosts " + sorted()
          + "; the worker would refuse the release. Pass the worker's INPLACE_ARTIFACT_HOSTS with --artifact-hosts");
    }
    String text = uri.toString();
    this.base = URI.create(text.endsWith("/") ? text : text + "/");
    this.http = http;
  }

  @Override
  public Optional<Measured> measure(String fileName) throws IOException {
    // '+' stands for itself in a path, but some servers read it as a space: sent encoded.
    URI first = base.resolve(fileName.replace("+", "%2B"));
    URI current = first;
    for (int hop = 0; ; hop++) {
      HttpResponse<InputStream> response;
      try {
        response = http.send(HttpRequest.newBuilder(current).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted reading " + current, e);
      }
      int status = response.statusCode();
      if (status == 404) {
        response.body().close();
        return Optional.empty();
      }
      if (status / 100 == 3) {
        response.body().close();
        String location = response.headers().firstValue("Location")
            .orElseThrow(() -> new CommandRefused(first + ": a redirect without a location"));
        if (hop >= MAX_REDIRECTS) {
          throw new CommandRefused(first + ": more than " + MAX_REDIRECTS + " redirects; the worker follows at most "
              + MAX_REDIRECTS);
        }
        current = next(first, current, location);
        continue;
      }
      if (status != 200) {
        response.body().close();
        throw new CommandRefused(current + " answered HTTP " + status);
      }
      return Optional.of(ReleaseMirror.digest(first.toString(), response.body()));
    }
  }

  /** The redirect target, checked as the worker checks it before following it. */
  private URI next(URI first, URI current, String location) {
    URI next;
    try {
      next = current.resolve(new URI(location));
    } catch (URISyntaxException | IllegalArgumentException e) {
      throw new CommandRefused(first + " redirects to an invalid location");
    }
    if (!"https".equalsIgnoreCase(next.getScheme()) || next.getHost() == null || next.getRawUserInfo() != null) {
      throw new CommandRefused(first + " redirects to " + next + ", not a plain https URL: the worker would refuse it");
    }
    String host = next.getHost().toLowerCase(Locale.ROOT);
    if (!hostAllowed(host)) {
      throw new CommandRefused(first + " redirects to host " + host + ", outside the allowed artifact hosts " + sorted()
          + ": the worker would refuse it. Add it to the worker's INPLACE_ARTIFACT_HOSTS and to --artifact-hosts");
    }
    return next;
  }

  private boolean hostAllowed(String host) {
    return allowedHosts.contains("*") || allowedHosts.contains(host);
  }

  private List<String> sorted() {
    return allowedHosts.stream().sorted().toList();
  }

  @Override
  public String describe() {
    return base.toString();
  }
}
