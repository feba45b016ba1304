package dev.inplace.sandbox.stack;

import dev.inplace.sandbox.TestServerLockLog;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.temporal.internal.testservice.GRPCServerHelper;
import io.temporal.internal.testservice.TestServicesStarter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * Temporal's test server as its own process, in real time, bound to loopback only. Its stock main
 * ({@code io.temporal.testserver.TestServer}) binds every interface; this one registers the same
 * services and health checks on a server bound to {@code 127.0.0.1}. Everything is in memory: it
 * survives worker crashes, not its own. The workers register inplace's search attributes at start.
 */
public final class TemporalServerMain {
  private TemporalServerMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1 || !args[0].matches("\\d{1,5}")) {
      System.err.println("usage: TemporalServerMain PORT");
      System.exit(2);
    }
    int port = Integer.parseInt(args[0]);
    // lockTimeSkipping=true: timers run in real time, as on a real server.
    TestServicesStarter services = new TestServicesStarter(true, 0);
    TestServerLockLog.install(services);
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    GRPCServerHelper.registerServicesAndHealthChecks(services.getServices(), builder);
    Server server = builder.build().start();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.shutdown();
                  try {
                    server.awaitTermination(5, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  services.close();
                }));
    System.out.println("temporal test server listening on 127.0.0.1:" + port);
    server.awaitTermination();
  }
}
