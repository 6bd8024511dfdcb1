// Hadoop's MiniCluster (HDFS + YARN + the JobHistory server in one JVM), started as
// Hadoop's own MiniHadoopClusterManager starts it, plus a control folder through which
// scripts/minicluster stops one DataNode or one NodeManager of the running cluster (a node
// fault while a job runs): MiniHadoopClusterManager keeps its MiniDFSCluster and
// MiniMRYarnCluster to itself, so nothing outside its JVM can stop a single node.
//
// Compiled by `scripts/hadoop-setup --minicluster` into hadoop/minicluster/classes/, run by
// `scripts/minicluster start`.  Options (MiniHadoopClusterManager's names):
//
//   -nnport P -nnhttpport P -rmport P -jhsport P   fixed ports (0: any)
//   -datanodes N -nodemanagers N                    how many of each (default 1)
//   -writeDetails FILE                              JSON written once the cluster is up
//   -control DIR                                    the control folder (below)
//   -D name=value                                   configuration, repeatable
//
// The control folder: a client writes NAME.request (one command, moved into place whole);
// the launcher runs it and answers in NAME.reply (moved into place whole), then removes
// the request.  A reply starts with "ok " or "error ".  Commands:
//
//   nodes                     one line per node: "datanode 0 127.0.0.1:PORT running",
//                             "nodemanager 1 HOST:PORT running LOCAL_DIRS"
//   stop datanode I           stop DataNode I (its number at start; the NameNode is not
//                             told: it finds the node dead when its heartbeats stop)
//   stop nodemanager I        stop NodeManager I (its containers end with it; it
//                             unregisters from the ResourceManager, as on a shutdown)
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.server.common.HdfsServerConstants.StartupOption;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MiniMRClientClusterFactory;
import org.apache.hadoop.mapred.MiniMRYarnClusterAdapter;
import org.apache.hadoop.mapreduce.MiniHadoopClusterManager;
import org.apache.hadoop.mapreduce.v2.jobhistory.JHAdminConfig;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;

public final class MiniClusterLauncher {
  private static final long POLL_MILLIS = 200;

  private MiniDFSCluster dfs;
  private MiniYARNCluster yarn;
  private final List<String> dataNodeNames = new ArrayList<>();  // by number at start
  private int nodeManagers;

  public static void main(String[] args) throws Exception {
    int nnPort = 0, nnHttpPort = 0, rmPort = 0, jhsPort = 0, dataNodes = 1, nodeManagers = 1;
    String details = null, control = null;
    JobConf conf = new JobConf();
    for (int i = 0; i < args.length; i++) {
      String option = args[i];
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("no value after " + option);
      }
      String value = args[++i];
      switch (option) {
        case "-nnport": nnPort = Integer.parseInt(value); break;
        case "-nnhttpport": nnHttpPort = Integer.parseInt(value); break;
        case "-rmport": rmPort = Integer.parseInt(value); break;
        case "-jhsport": jhsPort = Integer.parseInt(value); break;
        case "-datanodes": dataNodes = Integer.parseInt(value); break;
        case "-nodemanagers": nodeManagers = Integer.parseInt(value); break;
        case "-writeDetails": details = value; break;
        case "-control": control = value; break;
        case "-D": {
          String[] pair = value.split("=", 2);
          if (pair.length != 2) {
            throw new IllegalArgumentException("-D " + value + ": expected name=value");
          }
          conf.set(pair[0], pair[1]);
          break;
        }
        default: throw new IllegalArgumentException("unknown option " + option);
      }
    }
    if (dataNodes < 1 || nodeManagers < 1) {
      throw new IllegalArgumentException("at least one DataNode and one NodeManager");
    }
    MiniClusterLauncher launcher = new MiniClusterLauncher();
    try {
      launcher.start(conf, nnPort, nnHttpPort, rmPort, jhsPort, dataNodes, nodeManagers);
    } catch (Exception error) {
      // the servers already started keep the JVM alive: end it, so that the script sees
      // the failure at once instead of waiting out its start timeout
      error.printStackTrace();
      System.exit(1);
    }
    if (details != null) {
      launcher.writeDetails(Paths.get(details));
    }
    launcher.serve(control == null ? null : Paths.get(control));
  }

  /** As MiniHadoopClusterManager.start(), with -format: a fresh HDFS, then YARN on it. */
  private void start(JobConf conf, int nnPort, int nnHttpPort, int rmPort, int jhsPort,
                     int dataNodes, int nodeManagers) throws Exception {
    dfs = new MiniDFSCluster.Builder(conf).nameNodePort(nnPort).nameNodeHttpPort(nnHttpPort)
        .numDataNodes(dataNodes).format(true).startupOption(StartupOption.FORMAT).build();
    dfs.waitActive();
    for (DataNode node : dfs.getDataNodes()) {
      dataNodeNames.add(node.getDatanodeId().getXferAddr());
    }
    FileSystem.setDefaultUri(conf, new URI(dfs.getFileSystem().getUri().toString()));
    // fixed ports: the client configuration scripts/minicluster wrote names them
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.setBoolean(JHAdminConfig.MR_HISTORY_MINICLUSTER_FIXED_PORTS, true);
    conf.set(YarnConfiguration.RM_ADDRESS, MiniYARNCluster.getHostname() + ":" + rmPort);
    conf.set(JHAdminConfig.MR_HISTORY_ADDRESS, MiniYARNCluster.getHostname() + ":" + jhsPort);
    // the caller names the cluster's folders and its jar on HDFS: MiniHadoopClusterManager's,
    // as before this launcher
    MiniMRYarnClusterAdapter mr = (MiniMRYarnClusterAdapter) MiniMRClientClusterFactory.create(
        MiniHadoopClusterManager.class, nodeManagers, conf);
    yarn = mr.getMiniMRYarnCluster();
    this.nodeManagers = nodeManagers;
  }

  private void writeDetails(Path path) throws IOException {
    String json = "{\"namenode_port\":" + dfs.getNameNodePort()
        + ",\"resourcemanager_port\":\""
        + yarn.getConfig().get(YarnConfiguration.RM_ADDRESS).split(":")[1] + "\""
        + ",\"datanodes\":" + dataNodeNames.size()
        + ",\"nodemanagers\":" + nodeManagers + "}";
    writeWhole(path, json);
  }

  /** Answer the control folder's requests until the JVM is stopped. */
  private void serve(Path control) throws Exception {
    if (control != null) {
      Files.createDirectories(control);
    }
    while (true) {
      Thread.sleep(POLL_MILLIS);
      if (control == null) {
        continue;
      }
      List<Path> requests = new ArrayList<>();
      try (DirectoryStream<Path> found = Files.newDirectoryStream(control, "*.request")) {
        found.forEach(requests::add);
      }
      requests.sort(null);
      for (Path request : requests) {
        String command = new String(Files.readAllBytes(request), StandardCharsets.UTF_8).trim();
        String reply;
        try {
          reply = run(command);
        } catch (Exception error) {  // a node that fails to stop: the client is told why
          reply = "error " + command + ": " + error;
        }
        String name = request.getFileName().toString();
        writeWhole(control.resolve(name.substring(0, name.length() - ".request".length())
                                   + ".reply"), reply + "\n");
        Files.deleteIfExists(request);
      }
    }
  }

  private String run(String command) throws Exception {
    String[] words = command.split("\\s+");
    if (words.length == 1 && words[0].equals("nodes")) {
      return "ok " + nodes();
    }
    if (words.length != 3 || !words[0].equals("stop")) {
      return "error unknown command: " + command;
    }
    int index;
    try {
      index = Integer.parseInt(words[2]);
    } catch (NumberFormatException error) {
      return "error not a node number: " + words[2];
    }
    switch (words[1]) {
      case "datanode": {
        if (index < 0 || index >= dataNodeNames.size()) {
          return "error no DataNode " + index + " (there are " + dataNodeNames.size() + ")";
        }
        if (dfs.stopDataNode(dataNodeNames.get(index)) == null) {
          return "error DataNode " + index + " is already stopped";
        }
        return "ok stopped DataNode " + index + " (" + dataNodeNames.get(index) + ")";
      }
      case "nodemanager": {
        if (index < 0 || index >= nodeManagers) {
          return "error no NodeManager " + index + " (there are "
              + nodeManagers + ")";
        }
        NodeManager node = yarn.getNodeManager(index);
        if (node.getServiceState() != Service.STATE.STARTED) {
          return "error NodeManager " + index + " is already stopped";
        }
        String id = String.valueOf(node.getNMContext().getNodeId());
        node.stop();
        return "ok stopped NodeManager " + index + " (" + id + ")";
      }
      default:
        return "error unknown kind of node: " + words[1];
    }
  }

  private String nodes() {
    StringBuilder out = new StringBuilder("nodes\n");
    List<String> running = new ArrayList<>();
    for (DataNode node : dfs.getDataNodes()) {
      running.add(node.getDatanodeId().getXferAddr());
    }
    for (int i = 0; i < dataNodeNames.size(); i++) {
      String name = dataNodeNames.get(i);
      out.append("datanode ").append(i).append(' ').append(name).append(' ')
          .append(running.contains(name) ? "running" : "stopped").append('\n');
    }
    for (int i = 0; i < nodeManagers; i++) {
      NodeManager node = yarn.getNodeManager(i);
      out.append("nodemanager ").append(i).append(' ')
          .append(node.getNMContext().getNodeId()).append(' ')
          .append(node.getServiceState() == Service.STATE.STARTED ? "running" : "stopped")
          .append(' ').append(node.getConfig().get(YarnConfiguration.NM_LOCAL_DIRS))
          .append('\n');
    }
    return out.toString().trim();
  }

  private static void writeWhole(Path path, String text) throws IOException {
    Path partial = path.resolveSibling(path.getFileName() + ".partial");
    Files.write(partial, text.getBytes(StandardCharsets.UTF_8));
    Files.move(partial, path, StandardCopyOption.ATOMIC_MOVE);
  }
}
