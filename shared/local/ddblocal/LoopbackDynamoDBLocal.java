// Runs DynamoDB Local listening only on the addresses given, 127.0.0.1 by
// default. DynamoDB Local has no option for its listen address: it builds
// its Jetty server with new Server(port), which listens on every interface,
// so anyone on the network could read and write the local tables with any
// credentials. This launcher lets DynamoDB Local parse its own options and
// build its server, then sets the address on Jetty's connector before the
// server starts. ddblocal compiles it once with javac (see launcher.go).
//
//   java -cp <this class>:DynamoDBLocal.jar LoopbackDynamoDBLocal ADDR[,ADDR...] [DynamoDB Local options]

import java.lang.reflect.Field;
import java.util.Arrays;

import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args[0].isEmpty()) {
            System.err.println("usage: LoopbackDynamoDBLocal ADDR[,ADDR...] [DynamoDB Local options]");
            System.exit(2);
        }
        String[] addrs = args[0].split(",");
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(Arrays.copyOfRange(args, 1, args.length));

        // The server is a private field: a DynamoDB Local release that
        // renames it fails here, loudly, rather than listening everywhere.
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server jetty = (Server) field.get(proxy);
        Connector[] connectors = jetty.getConnectors();
        if (connectors.length != 1 || !(connectors[0] instanceof ServerConnector first)) {
            throw new IllegalStateException("DynamoDB Local's server has " + connectors.length
                    + " connectors, expected one ServerConnector; not starting it on every interface");
        }
        first.setHost(addrs[0]);
        for (int i = 1; i < addrs.length; i++) {
            ServerConnector more = new ServerConnector(jetty);
            more.setHost(addrs[i]);
            more.setPort(first.getPort());
            jetty.addConnector(more);
        }
        // SIGTERM stops Jetty and with it the database, cleanly.
        jetty.setStopAtShutdown(true);
        proxy.start();
    }
}
