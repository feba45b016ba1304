package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * deploy/bootstrap/ holds the shipped snippet byte for byte: the script and, per bootstrap config
 * kind, the fields `inplace hosts bootstrap-snippet KIND` prints (rewrite them with
 * {@code -Dgolden.update=true}). The script's refusals that need no cluster run here in a real
 * shell; its publishing runs against a real API server in HostsScanIT (sandbox).
 */
class BootstrapSnippetTest {
  private static final boolean UPDATE = Boolean.getBoolean("golden.update");
  private static final Path DEPLOY = Path.of("..", "deploy", "bootstrap");

  private static void assertGolden(Path file, String rendered) throws Exception {
    if (UPDATE) {
      Files.createDirectories(file.getParent());
      Files.writeString(file, rendered, StandardCharsets.UTF_8);
    }
    assertTrue(Files.exists(file), "missing " + file + "; run with -Dgolden.update=true");
    assertEquals(Files.readString(file, StandardCharsets.UTF_8), rendered, file + " is stale");
  }

  @Test
  void deployBootstrapHoldsTheShippedScript() throws Exception {
    assertGolden(DEPLOY.resolve("publish-host-keys.sh"), BootstrapSnippet.script());
  }

  @ParameterizedTest
  @EnumSource(BootstrapSnippet.Kind.class)
  void eachKindsFieldsAreTheGoldenFileAndInstallTheScriptVerbatim(BootstrapSnippet.Kind kind) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
    int code = InplaceCli.commandLine(CliContext.of(null, "inplace", print, 0), print)
        .execute("hosts", "bootstrap-snippet", kind.name().toLowerCase(java.util.Locale.ROOT));
    assertEquals(0, code);
    String yaml = out.toString(StandardCharsets.UTF_8);
    assertGolden(DEPLOY.resolve(kind.fileName()), yaml);

    Map<?, ?> fields = new ObjectMapper(new YAMLFactory()).readValue(yaml, Map.class);
    Map<?, ?> file = (Map<?, ?>) ((List<?>) fields.get("files")).get(0);
    assertEquals(BootstrapSnippet.INSTALLED_PATH, file.get("path"));
    assertEquals("0755", file.get("permissions"));
    assertEquals(BootstrapSnippet.script(), file.get("content"));
    assertEquals(List.of(BootstrapSnippet.INSTALLED_PATH), fields.get(kind.commandsField));
  }

  @Test
  void theScriptIsValidPosixShell() throws Exception {
    assertEquals(0, sh(List.of("sh", "-n", "-c", BootstrapSnippet.script()), Map.of()).code());
  }

  @Test
  void withoutAKubeletKubeconfigTheScriptRefusesBeforeTouchingTheCluster(@TempDir Path dir) throws Exception {
    Run run = script(dir, Map.of("INPLACE_KUBELET_KUBECONFIG", dir.resolve("absent").toString(), "INPLACE_KUBECTL", "false"));
    assertEquals(1, run.code());
    assertTrue(run.err().contains("no readable kubelet kubeconfig"), run.err());
  }

  @Test
  void aKeyFileThatIsNotAnSshPublicKeyIsRefusedNotPublished(@TempDir Path dir) throws Exception {
    Path kubeconfig = Files.writeString(dir.resolve("kubelet.conf"), "apiVersion: v1\n");
    Path bad = Files.writeString(dir.resolve("ssh_host_ed25519_key.pub"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    Path calls = dir.resolve("calls");
    Run run = script(dir, Map.of("INPLACE_KUBELET_KUBECONFIG", kubeconfig.toString(), "INPLACE_HOST_KEYS", bad.toString(),
        "INPLACE_KUBECTL", "touch " + calls));
    assertEquals(1, run.code());
    assertTrue(run.err().contains(bad + " is not an SSH public key"), run.err());
    assertTrue(!Files.exists(calls), "kubectl was run");
  }

  @Test
  void aKubeconfigThatIsNotANodesIsRefused(@TempDir Path dir) throws Exception {
    Path kubeconfig = Files.writeString(dir.resolve("kubelet.conf"), "apiVersion: v1\n");
    Path key = Files.writeString(dir.resolve("ssh_host_ed25519_key.pub"), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ root@h\n");
    // A kubectl that answers whoami as an administrator: the script must not annotate anything.
    Path kubectl = Files.writeString(dir.resolve("kubectl"), "#!/bin/sh\ncase \"$*\" in *whoami*) echo kubernetes-admin ;; *) echo annotated >> "
        + dir.resolve("calls") + " ;; esac\n");
    kubectl.toFile().setExecutable(true);
    Run run = script(dir, Map.of("INPLACE_KUBELET_KUBECONFIG", kubeconfig.toString(), "INPLACE_HOST_KEYS", key.toString(),
        "INPLACE_KUBECTL", kubectl.toString()));
    assertEquals(1, run.code());
    assertTrue(run.err().contains("is not a node's (it authenticates as 'kubernetes-admin')"), run.err());
    assertTrue(!Files.exists(dir.resolve("calls")), "annotate was run");
  }

  private record Run(int code, String err) {}

  private static Run script(Path dir, Map<String, String> env) throws Exception {
    Path script = Files.writeString(dir.resolve("publish-host-keys.sh"), BootstrapSnippet.script());
    return sh(List.of("sh", script.toString()), env);
  }

  private static Run sh(List<String> command, Map<String, String> env) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD);
    builder.environment().putAll(env);
    builder.environment().put("INPLACE_PUBLISH_ATTEMPTS", "1");
    Process process = builder.start();
    String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(process.waitFor(20, TimeUnit.SECONDS));
    return new Run(process.exitValue(), err);
  }
}
