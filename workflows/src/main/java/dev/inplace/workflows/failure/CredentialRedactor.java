package dev.inplace.workflows.failure;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one redactor of every output path (log lines, custom resource status and Events, hook
 * responses, failure messages and stack traces in a run's history, CLI output): replaces credential
 * values in free text by {@value #REDACTED} and keeps what names them, so a message still says what
 * was there. It covers
 *
 * <ul>
 *   <li>private keys in PEM ({@code -----BEGIN ... PRIVATE KEY----- ... -----END ...}), also cut
 *       short (no END), and base64-encoded PEM private keys ({@code client-key-data: LS0tLS1CRUdJTi...});
 *       certificates and public keys are kept;
 *   <li>Authorization headers ({@code Authorization: Bearer X}, {@code Basic X}, any scheme) and a
 *       long bare {@code Bearer X};
 *   <li>YAML, JSON and assignment forms whose key names a credential: {@code token: X},
 *       {@code "password": "X"}, {@code client-key-data: X}, {@code K3S_TOKEN=X}, also JSON escaped
 *       inside a string ({@code \"token\":\"X\"});
 *   <li>command-line flags ({@code --token X}, {@code --certificate-key X});
 *   <li>a URL's {@code user:password@}.
 * </ul>
 *
 * <p>A key names a credential when it ends with token, password, passwd, passphrase, api key,
 * access key, secret key, private key, credential(s) or client-key-data, or is {@code secret} or
 * ends with {@code _secret}/{@code -secret}. Keys that merely contain such a word (tokenizer,
 * passwordFile, tokenFile, privateKeySecret: the name of a Secret) are left alone, and so are values
 * that are references rather than credentials ({@code $VAR}, {@code (set)}, {@code <...>}).
 * Deterministic (plain regular expressions), so workflow code may call it.
 */
public final class CredentialRedactor {
  public static final String REDACTED = "<redacted>";

  private static final String PRIVATE_KEY_LABEL = "[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?";
  /** A PEM private key, to its END line or, cut short, to the end of the text. */
  private static final Pattern PEM_PRIVATE_KEY = Pattern.compile(
      "-----BEGIN (" + PRIVATE_KEY_LABEL + ")-----(?!" + Pattern.quote(REDACTED) + ")"
          + "(?:.*?-----END " + PRIVATE_KEY_LABEL + "-----|.*\\z)",
      Pattern.DOTALL);
  /** Base64 of {@code -----BEGIN }: a PEM block encoded once more (kubeconfig data fields, Secret data). */
  private static final Pattern BASE64_PEM = Pattern.compile("LS0tLS1CRUdJTi[A-Za-z0-9+/=]*");

  /** {@code Authorization: Bearer X}, {@code "authorization": "Basic X"}, {@code authorization=X}. */
  private static final Pattern AUTHORIZATION = Pattern.compile(
      "(\\bauthorization\\\\?[\"']?[ \\t]*[:=][ \\t]*\\\\?[\"']?"
          + "(?:(?:bearer|basic|digest|negotiate|token|apikey)[ \\t]+)?+)"
          + "(?!" + Pattern.quote(REDACTED) + ")[^\\s\"'\\\\,;}]+",
      Pattern.CASE_INSENSITIVE);
  /** A bearer token without its header: long, so the words "bearer tokens" stay. */
  private static final Pattern BEARER = Pattern.compile(
      "\\b(bearer[ \\t]+)[A-Za-z0-9._~+/-]{16,}=*", Pattern.CASE_INSENSITIVE);

  /** {@code postgres://user:password@host}: a datastore endpoint with its password (k3s HA). */
  private static final Pattern URL_USER_INFO = Pattern.compile("://[^\\s/@:]+:[^\\s@/]+@");

  private static final String CREDENTIAL_KEY =
      "(?:[A-Za-z0-9_.-]*(?:token|password|passwd|passphrase|api[-_]?key|access[-_]?key|secret[-_]?key"
          + "|private[-_]?key|credentials?|client-key-data)"
          + "|(?:[A-Za-z0-9.-]*[-_])?secret)";
  /** A value that is a reference, not a credential: {@code $VAR}, {@code ${VAR}}, {@code (set)}, {@code <...>}. */
  private static final String NOT_A_VALUE = "(?![$(<]|\\\\?\"[$(<])";
  /**
   * {@code key: value}, {@code "key": "value"}, {@code key=value}, {@code \"key\":\"value\"}: group 1
   * is everything up to the value, group 2 the value (quoted or not).
   */
  private static final Pattern KEY_VALUE = Pattern.compile(
      "((?<![A-Za-z0-9_.-])(\\\\?[\"']?)" + CREDENTIAL_KEY + "\\2[ \\t]*[:=][ \\t]*)" + NOT_A_VALUE
          + "(\\\\\"(?:[^\"\\\\]|\\\\[^\"])*\\\\\"|\"(?:[^\"\\\\\\n]|\\\\.)*\"|'[^'\\n]*'|[^\\s\"'\\\\,;&}\\]]+)",
      Pattern.CASE_INSENSITIVE);

  /** {@code --token X}, {@code --agent-token X}, {@code --password X}, {@code --certificate-key X}. */
  private static final Pattern FLAG = Pattern.compile(
      "(--[A-Za-z0-9-]*(?:token|password|passwd|secret|certificate-key)[ \\t]+)" + NOT_A_VALUE + "[^\\s\"']+",
      Pattern.CASE_INSENSITIVE);

  /** Lower-case words one of which every credential form contains: most text skips the patterns. */
  private static final String[] CUES = {
    "private key", "ls0tls1crudjti", "authorization", "bearer", "://", "token", "passw", "passphrase",
    "secret", "key", "credential"
  };

  private CredentialRedactor() {}

  /** {@code text} with every credential value replaced by {@value #REDACTED}; null stays null. */
  public static String redact(String text) {
    if (text == null || text.isEmpty() || !mayHoldCredential(text)) {
      return text;
    }
    String out = replace(PEM_PRIVATE_KEY, text,
        m -> "-----BEGIN " + m.group(1) + "-----" + REDACTED + "-----END " + m.group(1) + "-----");
    out = replace(BASE64_PEM, out, m -> encodesPrivateKey(m.group()) ? REDACTED : m.group());
    out = replace(AUTHORIZATION, out, m -> m.group(1) + REDACTED);
    out = replace(BEARER, out, m -> m.group(1) + REDACTED);
    out = URL_USER_INFO.matcher(out).replaceAll("://" + Matcher.quoteReplacement(REDACTED) + "@");
    out = replace(KEY_VALUE, out, m -> m.group(1) + quoted(m.group(3)));
    return replace(FLAG, out, m -> m.group(1) + REDACTED);
  }

  private static boolean mayHoldCredential(String text) {
    String lower = text.toLowerCase(Locale.ROOT);
    for (String cue : CUES) {
      if (lower.contains(cue)) {
        return true;
      }
    }
    return false;
  }

  /** The redacted value in the quotes the original had, so JSON stays JSON. */
  private static String quoted(String value) {
    if (value.startsWith("\\\"")) {
      return "\\\"" + REDACTED + "\\\"";
    }
    if (value.startsWith("\"")) {
      return "\"" + REDACTED + "\"";
    }
    if (value.startsWith("'")) {
      return "'" + REDACTED + "'";
    }
    return value.equals(REDACTED) ? value : REDACTED;
  }

  /** Whether a base64 run starting with {@code -----BEGIN } encodes a private key (not a certificate). */
  private static boolean encodesPrivateKey(String base64) {
    int length = Math.min(base64.length(), 80) / 4 * 4;
    try {
      String head = new String(Base64.getDecoder().decode(base64.substring(0, length)), StandardCharsets.US_ASCII);
      int end = head.indexOf("-----", "-----BEGIN ".length());
      String label = end < 0 ? head : head.substring(0, end);
      return label.contains("PRIVATE KEY") || end < 0;
    } catch (IllegalArgumentException e) {
      return true; // not decodable as base64: cannot tell, so it goes
    }
  }

  private static String replace(Pattern pattern, String text, Function<Matcher, String> replacement) {
    Matcher m = pattern.matcher(text);
    if (!m.find()) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length());
    do {
      m.appendReplacement(out, Matcher.quoteReplacement(replacement.apply(m)));
    } while (m.find());
    m.appendTail(out);
    return out.toString();
  }
}
