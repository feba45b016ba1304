package dev.inplace.starter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A release's files in a local directory (an air-gapped mirror). The catalogue's sources are the
 * files' paths as the worker sees the directory: {@code workerPath}, the same path when the mirror
 * is mounted at the same place (under the worker's INPLACE_ARTIFACT_MIRROR_DIR).
 */
final class DirectoryMirror implements ReleaseMirror {
  /** What the worker accepts in a local source without quoting (as an install path). */
  private static final Pattern SAFE_PATH = Pattern.compile("/[A-Za-z0-9._+/@-]*");

  private final Path directory;
  private final String workerPath;

  DirectoryMirror(Path directory, String workerPath) {
    if (!Files.isDirectory(directory)) {
      throw new CliException("--from " + directory + " is neither an https URL nor a directory");
    }
    this.directory = directory.toAbsolutePath().normalize();
    String path = workerPath == null ? this.directory.toString() : workerPath.replaceAll("/+$", "");
    if (!SAFE_PATH.matcher(path).matches() || path.contains("/../") || path.endsWith("/..") || path.isEmpty()) {
      throw new CliException("--mirror-path must be an absolute path of [A-Za-z0-9._+/@-] without '..', got '" + path + "'");
    }
    this.workerPath = path;
  }

  @Override
  public Optional<Measured> measure(String fileName) throws IOException {
    Path file = directory.resolve(fileName);
    if (Files.isSymbolicLink(file)) {
      throw new CommandRefused(file + " is a symbolic link; the worker refuses links in its mirror that lead out of it:"
          + " put the file itself there");
    }
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.empty();
    }
    if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
      throw new CommandRefused(file + " is not a regular file");
    }
    return Optional.of(ReleaseMirror.digest(workerPath + "/" + fileName, Files.newInputStream(file)));
  }

  @Override
  public String describe() {
    return directory.toString();
  }
}
