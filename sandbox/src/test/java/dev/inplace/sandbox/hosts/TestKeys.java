package dev.inplace.sandbox.hosts;

import java.nio.file.Path;
import java.security.KeyPair;

/** The sandbox's key files for tests outside its package: a real key pair in OpenSSH formats. */
public final class TestKeys {
  public final String privateKey;
  public final String publicKeyLine;

  private TestKeys(KeyPair pair) {
    this.privateKey = KeyFiles.openSshPrivateKey(pair, "test");
    this.publicKeyLine = KeyFiles.publicKeyLine(pair.getPublic());
  }

  public static TestKeys generate(Path file) {
    return new TestKeys(KeyFiles.loadOrGenerate(file, "test", KeyFiles.Kind.RSA));
  }
}
