package dev.inplace.workflows.failure;

import static dev.inplace.workflows.failure.CredentialRedactor.redact;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

class CredentialRedactorTest {
  private static final String KEY_BODY = "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
      + "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n";

  @Test
  void aServiceCommandLineLosesItsTokenButKeepsTheFlag() {
    assertEquals("CGroup: └─812 /usr/local/bin/k3s server --token <redacted> --cluster-init",
        redact("CGroup: └─812 /usr/local/bin/k3s server --token K10abc::server:s3cr3t --cluster-init"));
    assertEquals("ExecStart=/usr/local/bin/k3s agent --agent-token=<redacted> --server https://10.0.0.1:6443",
        redact("ExecStart=/usr/local/bin/k3s agent --agent-token=s3cr3t --server https://10.0.0.1:6443"));
    assertEquals("kubeadm join --discovery-token <redacted> --certificate-key <redacted>",
        redact("kubeadm join --discovery-token abcdef.0123456789abcdef --certificate-key 0a1b2c"));
  }

  @Test
  void environmentAssignmentsLoseTheirValue() {
    assertEquals("Environment=K3S_TOKEN=<redacted> K3S_URL=https://10.0.0.1:6443",
        redact("Environment=K3S_TOKEN=s3cr3t K3S_URL=https://10.0.0.1:6443"));
    assertEquals("DB_PASSWORD=<redacted>", redact("DB_PASSWORD=hunter2"));
    assertEquals("GET /metrics?access_token=<redacted>&verbose=1", redact("GET /metrics?access_token=abc123&verbose=1"));
  }

  @Test
  void aDatastoreUrlLosesItsUserAndPassword() {
    assertEquals("k3s server --datastore-endpoint=postgres://<redacted>@10.0.0.5:5432/k3s",
        redact("k3s server --datastore-endpoint=postgres://k3s:s3cr3t@10.0.0.5:5432/k3s"));
    assertEquals("K3S_DATASTORE_ENDPOINT=mysql://<redacted>@tcp(10.0.0.5:3306)/k3s",
        redact("K3S_DATASTORE_ENDPOINT=mysql://root:s3cr3t@tcp(10.0.0.5:3306)/k3s"));
  }

  @Test
  void yamlCredentialKeysLoseTheirValueAndKeepTheKey() {
    String kubeconfig = """
        users:
        - name: admin
          user:
            token: eyJhbGciOiJSUzI1NiJ9.payload.sig
            client-key-data: QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=
            client-certificate-data: Y2VydGlmaWNhdGU=
            password: "hunter2 with spaces"
            passphrase: 'open sesame'
        """;
    assertEquals("""
        users:
        - name: admin
          user:
            token: <redacted>
            client-key-data: <redacted>
            client-certificate-data: Y2VydGlmaWNhdGU=
            password: "<redacted>"
            passphrase: '<redacted>'
        """, redact(kubeconfig));
    assertEquals("bootstrapToken: <redacted>, apiKey: <redacted>, client_secret: <redacted>, secret: <redacted>",
        redact("bootstrapToken: abcdef.0123456789abcdef, apiKey: k-123, client_secret: cs-1, secret: s-1"));
  }

  @Test
  void jsonCredentialKeysLoseTheirValueAndStayJson() {
    assertEquals("{\"user\":\"admin\",\"password\":\"<redacted>\",\"token\" : \"<redacted>\"}",
        redact("{\"user\":\"admin\",\"password\":\"s3cr3t \\\"quoted\\\"\",\"token\" : \"t0k3n\"}"));
    // JSON carried inside a JSON string (a log field, a status message quoting a response body).
    assertEquals("body {\\\"client-key-data\\\":\\\"<redacted>\\\",\\\"kind\\\":\\\"Config\\\"}",
        redact("body {\\\"client-key-data\\\":\\\"QUJD\\\",\\\"kind\\\":\\\"Config\\\"}"));
  }

  @Test
  void pemPrivateKeysLoseTheirBodyWhateverTheirKind() {
    for (String label : List.of("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY")) {
      String text = "ssh key rejected: -----BEGIN " + label + "-----\n" + KEY_BODY + "-----END " + label + "----- (fleet/ssh)";
      assertEquals("ssh key rejected: -----BEGIN " + label + "-----<redacted>-----END " + label + "----- (fleet/ssh)",
          redact(text), label);
    }
    // Cut short by a length limit: everything after BEGIN goes.
    assertEquals("key: -----BEGIN PRIVATE KEY-----<redacted>-----END PRIVATE KEY-----",
        redact("key: -----BEGIN PRIVATE KEY-----\n" + KEY_BODY.substring(0, 30)));
    // Inside JSON, the line breaks are escaped.
    assertEquals("{\"k\":\"-----BEGIN EC PRIVATE KEY-----<redacted>-----END EC PRIVATE KEY-----\"}",
        redact("{\"k\":\"-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEE\\n-----END EC PRIVATE KEY-----\"}"));
  }

  @Test
  void certificatesAndPublicKeysAreKept() {
    String cert = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----";
    assertEquals(cert, redact(cert));
    String pub = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQ\n-----END PUBLIC KEY-----";
    assertEquals(pub, redact(pub));
    String certData = "certificate-authority-data: " + base64("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n");
    assertEquals(certData, redact(certData));
  }

  @Test
  void base64EncodedPrivateKeysGoUnderAnyKey() {
    String encoded = base64("-----BEGIN RSA PRIVATE KEY-----\n" + KEY_BODY + "-----END RSA PRIVATE KEY-----\n");
    assertEquals("tls.key: <redacted>", redact("tls.key: " + encoded));
    assertEquals("{\"ssh-privatekey\":\"<redacted>\"}", redact("{\"ssh-privatekey\":\"" + encoded + "\"}"));
  }

  @Test
  void authorizationHeadersLoseTheirCredentialAndKeepTheScheme() {
    assertEquals("Authorization: Bearer <redacted>", redact("Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln"));
    assertEquals("authorization: Basic <redacted>", redact("authorization: Basic dXNlcjpwYXNz"));
    assertEquals("{\"Authorization\": \"Bearer <redacted>\"}", redact("{\"Authorization\": \"Bearer abc.def\"}"));
    assertEquals("metadata authorization=<redacted>, namespace=default",
        redact("metadata authorization=k-123, namespace=default"));
    assertEquals("curl -H 'Authorization: Bearer <redacted>' https://10.0.0.1:6443/readyz",
        redact("curl -H 'Authorization: Bearer sha256~abcdefghijklmnop' https://10.0.0.1:6443/readyz"));
    assertEquals("sent Bearer <redacted> to the API server",
        redact("sent Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.e30 to the API server"));
  }

  @Test
  void ordinaryTextIsLeftAsItIs() {
    for (String plain : List.of(
        "service k3s is not active after restart | Active: failed (Result: exit-code) | token file missing",
        "tokenizer: whitespace, tokens: 12, tokenFile: /var/lib/rancher/k3s/server/token",
        "passwordFile: /etc/inplace/pw, privateKeySecret: ssh-key, knownHostsSecret: known-hosts",
        "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "digest mismatch: want sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "kubeadm join 10.0.0.1:6443 --discovery-token-ca-cert-hash sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
        "the /metrics door wants a bearer token the API server accepts",
        "Basic checks passed; authorization failed for user system:anonymous",
        "address=127.0.0.1:7233, namespace=default, apiKey=(none), tls=TLS (system CAs)",
        "k3s agent --token \"$K3S_TOKEN\" --server https://10.0.0.1:6443",
        "ssh key fleet/ssh-key: not a private key",
        "fetch https://releases.example/k3s failed: 404",
        "")) {
      assertEquals(plain, redact(plain));
    }
    assertNull(redact(null));
  }

  @Test
  void redactingTwiceChangesNothingMore() {
    String text = "token: abc --token def K3S_TOKEN=ghi Authorization: Bearer jkl postgres://u:p@h "
        + "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY----- {\"password\":\"x\"}";
    String once = redact(text);
    assertEquals(once, redact(once));
    for (String secret : List.of("abc", "def", "ghi", "jkl", "u:p", "AAAA", "\"x\"")) {
      assertFalse(once.contains(secret), secret + " in " + once);
    }
    assertTrue(once.startsWith("token: <redacted> --token <redacted> K3S_TOKEN=<redacted>"), once);
  }

  private static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.US_ASCII));
  }
}
