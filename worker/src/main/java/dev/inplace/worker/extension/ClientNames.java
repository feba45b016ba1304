package dev.inplace.worker.extension;

import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * Who may call the hooks once the client CA has vouched for a certificate: only the names listed here
 * (the CAPI managers' certificates, deploy/extension), so a certificate the CA signed for anything
 * else is kept out. A certificate is admitted when its subject's common name or one of its DNS names
 * is listed. It does not stop a requester who may ask the CA's issuer for a listed name: who may use
 * the issuer is limited outside the worker (docs/capi-extension.md).
 */
record ClientNames(Set<String> names) {
  /** The CAPI managers deploy/extension issues client certificates to (certificate.yaml). */
  static final List<String> DEFAULTS = List.of("capi-controller-manager", "capi-kubeadm-control-plane-controller-manager");

  ClientNames {
    if (names == null || names.isEmpty()) {
      throw new IllegalArgumentException("at least one client certificate name is needed");
    }
    for (String name : names) {
      if (name.isEmpty() || name.chars().anyMatch(Character::isWhitespace)) {
        throw new IllegalArgumentException("a client certificate name must be one word, got '" + name + "'");
      }
    }
    names = Set.copyOf(names);
  }

  static ClientNames of(Collection<String> names) {
    return new ClientNames(Set.copyOf(names));
  }

  /** Throws unless the certificate's common name or a DNS name is one of {@link #names}. */
  void admit(X509Certificate certificate) throws CertificateException {
    List<String> presented = presented(certificate);
    for (String name : presented) {
      if (names.contains(name)) {
        return;
      }
    }
    throw new CertificateException("client certificate " + certificate.getSubjectX500Principal().getName()
        + " (names " + presented + ") is signed by the client CA but is not one of the callers allowed in "
        + ExtensionOptions.CLIENT_NAMES + " " + new TreeSet<>(names));
  }

  /** The subject's common names, then the DNS subject alternative names. */
  static List<String> presented(X509Certificate certificate) throws CertificateException {
    List<String> presented = new ArrayList<>();
    try {
      for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          presented.add(String.valueOf(rdn.getValue()));
        }
      }
    } catch (InvalidNameException e) {
      throw new CertificateException("cannot read the client certificate's subject: " + e.getMessage(), e);
    }
    try {
      Collection<List<?>> alternatives = certificate.getSubjectAlternativeNames();
      if (alternatives != null) {
        for (List<?> alternative : alternatives) {
          if (Integer.valueOf(2).equals(alternative.get(0))) { // dNSName
            presented.add(String.valueOf(alternative.get(1)));
          }
        }
      }
    } catch (CertificateParsingException e) {
      throw new CertificateException("cannot read the client certificate's alternative names: " + e.getMessage(), e);
    }
    return presented;
  }
}
