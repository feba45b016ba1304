package dev.inplace.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A TLS gRPC frontend on loopback that records the metadata of every call it receives and forwards
 * the call, as raw bytes, to an upstream channel (an in-process Temporal test server). It knows no
 * service: every method name reaches its fallback registry, so it sees exactly what the client sends
 * on the wire, operator service and health checks included. Temporal's frontend calls are unary.
 * Shared with the starter's tests (client test-jar).
 */
public final class RecordingGrpcProxy implements AutoCloseable {
  static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> NAMESPACE = Metadata.Key.of("temporal-namespace", Metadata.ASCII_STRING_MARSHALLER);

  /** One received call: its full method name and the two headers (null when absent). */
  public record Call(String method, String authorization, String namespace) {}

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  public final Path caCert;
  private final Server server;
  private final List<Call> calls = new CopyOnWriteArrayList<>();

  public RecordingGrpcProxy(Path dir, Channel upstream) throws Exception {
    KeyPair caKeys = TlsFrontend.keys();
    X509Certificate ca = TlsFrontend.certificate("CN=inplace test Temporal CA", caKeys, caKeys.getPrivate(), true);
    KeyPair serverKeys = TlsFrontend.keys();
    X509Certificate cert = TlsFrontend.certificate("CN=" + TlsFrontend.SERVER_NAME, serverKeys, caKeys.getPrivate(), false);
    caCert = Files.writeString(dir.resolve("proxy-ca.pem"), TlsFrontend.pem("CERTIFICATE", ca.getEncoded()));
    Path chain = Files.writeString(dir.resolve("proxy-server.pem"), TlsFrontend.pem("CERTIFICATE", cert.getEncoded()));
    Path key = Files.writeString(dir.resolve("proxy-server.key"),
        TlsFrontend.pem("PRIVATE KEY", serverKeys.getPrivate().getEncoded()));
    ServerInterceptor recorder =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            calls.add(new Call(call.getMethodDescriptor().getFullMethodName(), headers.get(AUTHORIZATION), headers.get(NAMESPACE)));
            return next.startCall(call, headers);
          }
        };
    HandlerRegistry forwardAll =
        new HandlerRegistry() {
          @Override
          public ServerMethodDefinition<?, ?> lookupMethod(String method, String authority) {
            MethodDescriptor<byte[], byte[]> descriptor =
                MethodDescriptor.newBuilder(BYTES, BYTES)
                    .setType(MethodDescriptor.MethodType.UNARY)
                    .setFullMethodName(method)
                    .build();
            // The upstream call runs in the server call's context: its deadline and cancellation carry over.
            return ServerMethodDefinition.create(descriptor, ServerCalls.asyncUnaryCall(
                (request, response) -> ClientCalls.asyncUnaryCall(
                    upstream.newCall(descriptor, CallOptions.DEFAULT), request, response)));
          }
        };
    server = NettyServerBuilder.forAddress(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            TlsServerCredentials.create(chain.toFile(), key.toFile()))
        .fallbackHandlerRegistry(forwardAll)
        .intercept(recorder)
        .build()
        .start();
  }

  public String address() {
    return "127.0.0.1:" + server.getPort();
  }

  /** Every call received so far, in order. */
  public List<Call> calls() {
    return List.copyOf(calls);
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
  }
}
