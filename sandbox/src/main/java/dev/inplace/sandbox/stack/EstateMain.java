package dev.inplace.sandbox.stack;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.demo.DemoResources;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.hosts.SshFaults;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.InplaceCrds;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simulated estate as its own process of the local stack: the management and workload API
 * servers on fixed loopback ports, the SSH hosts, the kubelet simulator, the faults given with
 * {@code --fail}, the CRDs and the release catalogue. It writes the management cluster's kubeconfig,
 * the resources of the default demo ({@code upgrade.yaml}) and, last, {@code estate.json}; then it
 * serves until it is stopped.
 *
 * <p>Its control endpoint on {@code 127.0.0.1:17480} reports ground truth read from the workload API
 * server ({@code GET /nodes}), the whole ground truth ({@code GET /report}: {@link
 * dev.inplace.sandbox.truth.EstateReport} as JSON), clears faults ({@code POST
 * /faults/clear?node=NODE}) and sets the SSH faults ({@code POST /faults/ssh?drop=PCT&hang=PCT&seed=S},
 * answering the settings and counters). {@code --ssh-drop PCT}, {@code --ssh-hang PCT} and {@code
 * --ssh-seed S} set them at start.
 */
public final class EstateMain {
  private static final Logger log = LoggerFactory.getLogger(EstateMain.class);

  private EstateMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2 || !"--dir".equals(args[0])) {
      System.err.println("usage: EstateMain --dir STACK_DIR [demo estate options]");
      System.exit(2);
    }
    StackLayout layout = new StackLayout(Path.of(args[1]));
    DemoOptions options;
    SshFaults.Settings sshFaults;
    try {
      List<String> rest = new ArrayList<>(Arrays.asList(args).subList(2, args.length));
      sshFaults = sshFaults(rest);
      options = DemoOptions.parse(rest.toArray(String[]::new));
    } catch (IllegalArgumentException e) {
      System.err.println("estate: " + e.getMessage());
      System.exit(2);
      return;
    }
    // Progress on stdout (the log): the stack's readiness wait shows its end when the start-up is slow.
    Estate estate = Estate.create(layout.estateDir(), options.estateSpec(), StackLayout.MANAGEMENT_PORT,
        StackLayout.WORKLOAD_PORT, System.out::println);
    estate.sshFaults().set(sshFaults);
    if (sshFaults.dropPercent() + sshFaults.hangPercent() > 0) {
      log.warn("SSH faults: drop {}%, hang {}%, seed {}", sshFaults.dropPercent(), sshFaults.hangPercent(), sshFaults.seed());
    }
    for (DemoOptions.Fault fault : options.faults()) {
      if (fault.kairosFault() != null) {
        estate.armKairos(fault.node(), fault.kairosFault());
      } else {
        estate.arm(fault.node(), fault.step());
      }
      log.warn("fault armed: {} will fail at {}", fault.node(), fault.label());
    }
    // What an operator installs before the worker: the CRDs and the release catalogue.
    InplaceCrds.install(estate.management());
    estate.management()
        .resource(CatalogueReference.configMap(Estate.NAMESPACE, DemoResources.CATALOGUE, Files.readString(estate.catalogue())))
        .createOr(r -> r.update());
    Files.writeString(layout.managementKubeconfig(), estate.managementKubeconfig());
    Files.writeString(layout.workloadKubeconfig(), estate.workloadKubeconfig());
    Files.writeString(
        layout.demoResources(),
        Serialization.asYaml(DemoResources.controlPlane(options, estate.ssh()))
            + Serialization.asYaml(DemoResources.workers(options, estate.ssh())));

    HttpServer control =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), StackLayout.ESTATE_CONTROL_PORT), 8);
    control.createContext("/nodes", exchange -> answer(exchange, "GET", () -> nodes(estate)));
    control.createContext(
        "/faults/clear",
        exchange ->
            answer(
                exchange,
                "POST",
                () -> {
                  String node = query(exchange, "node");
                  estate.clearFaults(node);
                  return Map.of("cleared", node);
                }));
    control.createContext("/report", exchange -> answerJson(exchange, "GET", () -> estate.report().toJson()));
    control.createContext(
        "/faults/ssh",
        exchange ->
            answer(
                exchange,
                "POST",
                () -> {
                  SshFaults.Settings settings =
                      new SshFaults.Settings(
                          percent("drop", query(exchange, "drop")),
                          percent("hang", query(exchange, "hang")),
                          optionalQuery(exchange, "seed").map(EstateMain::seed).orElse(0L));
                  estate.sshFaults().set(settings);
                  log.warn("SSH faults set: drop {}%, hang {}%, seed {}", settings.dropPercent(), settings.hangPercent(), settings.seed());
                  return sshFaultState(estate);
                }));
    control.start();

    new EstateDescription(
            ProcessHandle.current().pid(),
            Estate.NAMESPACE,
            Estate.CLUSTER,
            options.distribution().name().toLowerCase(),
            options.from(),
            options.to(),
            layout.managementKubeconfig().toString(),
            layout.workloadKubeconfig().toString(),
            estate.catalogue().toAbsolutePath().toString(),
            "http://127.0.0.1:" + StackLayout.ESTATE_CONTROL_PORT,
            estate.ssh(),
            estate.pools(),
            estate.nodes())
        .write(layout.estateDescription());
    System.out.println("estate ready: " + estate.nodes().size() + " nodes, management API " + "http://127.0.0.1:"
        + StackLayout.MANAGEMENT_PORT);

    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  control.stop(0);
                  estate.close();
                  stopped.countDown();
                }));
    stopped.await();
  }

  /** Ground truth per node, from the workload API server: version, readiness, cordon. */
  private static List<Map<String, Object>> nodes(Estate estate) {
    List<Map<String, Object>> nodes = new ArrayList<>();
    for (Estate.EstateNode n : estate.nodes()) {
      Node node = estate.workload().nodes().withName(n.name()).get();
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("name", n.name());
      entry.put("role", n.role().name());
      entry.put("kubeletVersion", node.getStatus().getNodeInfo().getKubeletVersion());
      entry.put("unschedulable", Boolean.TRUE.equals(node.getSpec().getUnschedulable()));
      entry.put(
          "ready",
          node.getStatus().getConditions().stream()
              .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())));
      nodes.add(entry);
    }
    return nodes;
  }

  /** Takes {@code --ssh-drop PCT}, {@code --ssh-hang PCT}, {@code --ssh-seed S} out of {@code args}. */
  static SshFaults.Settings sshFaults(List<String> args) {
    int drop = 0;
    int hang = 0;
    long seed = 0;
    for (int i = 0; i < args.size(); ) {
      String arg = args.get(i);
      if (!List.of("--ssh-drop", "--ssh-hang", "--ssh-seed").contains(arg)) {
        i++;
        continue;
      }
      if (i + 1 >= args.size()) {
        throw new IllegalArgumentException(arg + " needs a value");
      }
      String value = args.get(i + 1);
      switch (arg) {
        case "--ssh-drop" -> drop = percent(arg, value);
        case "--ssh-hang" -> hang = percent(arg, value);
        default -> seed = seed(value);
      }
      args.subList(i, i + 2).clear();
    }
    return new SshFaults.Settings(drop, hang, seed);
  }

  private static int percent(String name, String value) {
    try {
      int pct = Integer.parseInt(value);
      if (pct < 0 || pct > 100) {
        throw new IllegalArgumentException(name + " must be a percentage 0..100, got " + value);
      }
      return pct;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a percentage 0..100, got '" + value + "'");
    }
  }

  private static long seed(String value) {
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("seed must be an integer, got '" + value + "'");
    }
  }

  private static Map<String, Object> sshFaultState(Estate estate) {
    SshFaults.Settings s = estate.sshFaults().settings();
    Map<String, Object> state = new LinkedHashMap<>();
    state.put("dropPercent", s.dropPercent());
    state.put("hangPercent", s.hangPercent());
    state.put("seed", s.seed());
    state.put("sshDropped", estate.sshFaults().dropped());
    state.put("sshHung", estate.sshFaults().hung());
    return state;
  }

  /** Answers a body that is already JSON. */
  private static void answerJson(HttpExchange exchange, String method, Handler json) throws IOException {
    if (!method.equals(exchange.getRequestMethod())) {
      answer(exchange, method, () -> null);
      return;
    }
    String body;
    int code = 200;
    try {
      body = (String) json.handle();
    } catch (Exception e) {
      code = 500;
      body = new ObjectMapper().writeValueAsString(Map.of("error", String.valueOf(e.getMessage())));
    }
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private interface Handler {
    Object handle() throws Exception;
  }

  private static void answer(HttpExchange exchange, String method, Handler handler) throws IOException {
    int code;
    Object body;
    if (!method.equals(exchange.getRequestMethod())) {
      code = 405;
      body = Map.of("error", "use " + method);
    } else {
      try {
        body = handler.handle();
        code = 200;
      } catch (IllegalArgumentException e) {
        code = 400;
        body = Map.of("error", e.getMessage());
      } catch (Exception e) {
        code = 500;
        body = Map.of("error", String.valueOf(e.getMessage()));
      }
    }
    byte[] bytes = new ObjectMapper().writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static String query(HttpExchange exchange, String name) {
    return optionalQuery(exchange, name)
        .orElseThrow(() -> new IllegalArgumentException("missing query parameter '" + name + "'"));
  }

  private static java.util.Optional<String> optionalQuery(HttpExchange exchange, String name) {
    String query = exchange.getRequestURI().getRawQuery();
    if (query != null) {
      for (String pair : query.split("&")) {
        int eq = pair.indexOf('=');
        if (eq > 0 && pair.substring(0, eq).equals(name)) {
          return java.util.Optional.of(java.net.URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
      }
    }
    return java.util.Optional.empty();
  }
}
