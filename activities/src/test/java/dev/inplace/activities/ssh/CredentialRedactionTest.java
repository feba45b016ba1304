package dev.inplace.activities.ssh;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CredentialRedactionTest {
  @Test
  void aServiceCommandLineLosesItsTokenButKeepsTheFlag() {
    assertEquals("CGroup: └─812 /usr/local/bin/k3s server --token <redacted> --cluster-init",
        CredentialRedaction.redact("CGroup: └─812 /usr/local/bin/k3s server --token K10abc::server:s3cr3t --cluster-init"));
    assertEquals("ExecStart=/usr/local/bin/k3s agent --agent-token=<redacted> --server https://10.0.0.1:6443",
        CredentialRedaction.redact("ExecStart=/usr/local/bin/k3s agent --agent-token=s3cr3t --server https://10.0.0.1:6443"));
    assertEquals("kubeadm join --discovery-token <redacted> --certificate-key <redacted>",
        CredentialRedaction.redact("kubeadm join --discovery-token abcdef.0123456789abcdef --certificate-key 0a1b2c"));
  }

  @Test
  void environmentAssignmentsLoseTheirValue() {
    assertEquals("Environment=K3S_TOKEN=<redacted> K3S_URL=https://10.0.0.1:6443",
        CredentialRedaction.redact("Environment=K3S_TOKEN=s3cr3t K3S_URL=https://10.0.0.1:6443"));
    assertEquals("DB_PASSWORD=<redacted>", CredentialRedaction.redact("DB_PASSWORD=hunter2"));
  }

  @Test
  void aDatastoreUrlLosesItsUserAndPassword() {
    assertEquals("k3s server --datastore-endpoint=postgres://<redacted>@10.0.0.5:5432/k3s",
        CredentialRedaction.redact("k3s server --datastore-endpoint=postgres://k3s:s3cr3t@10.0.0.5:5432/k3s"));
    assertEquals("K3S_DATASTORE_ENDPOINT=mysql://<redacted>@tcp(10.0.0.5:3306)/k3s",
        CredentialRedaction.redact("K3S_DATASTORE_ENDPOINT=mysql://root:s3cr3t@tcp(10.0.0.5:3306)/k3s"));
    assertEquals("fetch https://releases.example/k3s failed", CredentialRedaction.redact("fetch https://releases.example/k3s failed"));
  }

  @Test
  void ordinaryErrorOutputIsLeftAsItIs() {
    String plain = "service k3s is not active after restart | Active: failed (Result: exit-code) | token file missing";
    assertEquals(plain, CredentialRedaction.redact(plain));
    assertEquals("--token <redacted>", CredentialRedaction.redact(CredentialRedaction.redact("--token s3cr3t")));
  }
}
