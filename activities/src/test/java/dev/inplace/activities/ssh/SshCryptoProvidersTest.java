package dev.inplace.activities.ssh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.security.KeyFactory;
import javax.crypto.Cipher;
import org.junit.jupiter.api.Test;

class SshCryptoProvidersTest {

  @Test
  void ecdsaKeysResolveWhileCiphersStayOnTheFastJdkProvider() throws Exception {
    new SshConnector((ns, name) -> java.util.Map.of(), SshClientOptions.defaults());

    // sshj decodes ecdsa-sha2-* host and client keys through this name, which only BouncyCastle has.
    assertNotNull(KeyFactory.getInstance("ECDSA"));
    assertEquals("SunJCE", Cipher.getInstance("AES/GCM/NoPadding").getProvider().getName());
  }
}
