package dev.inplace.worker.crd;

/** A ControlPlaneUpgrade asks for nothing beyond what both kinds share. */
public class ControlPlaneUpgradeSpec extends UpgradeSpec<ControlPlaneUpgradeSpec> {}
