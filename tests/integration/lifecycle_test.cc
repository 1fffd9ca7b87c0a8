// The life of a fabric that is up (docs/lifecycle.md): every start can be attached to, `ibemu
// down` returns only once the process has ended and its files are gone, a fabric killed with
// SIGKILL is cleaned up by the next `up`, a second `up` of a name is refused while the first
// lives, and the run directory keeps other users out.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__)
// The Debian tools cannot load an instrumented libibumad; the lifecycle itself is still checked.
constexpr bool kTools = false;
#else
constexpr bool kTools = true;
#endif

std::string MakeTempDir(const std::string& what, mode_t mode = 0700) {
  std::string t = "/tmp/ibemu-" + what + "-XXXXXX";
  std::vector<char> buf(t.begin(), t.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return "";
  chmod(buf.data(), mode);
  return buf.data();
}

// Files of fabric `name` left in `dir` (lock, state, sockets, temporaries).
std::vector<std::string> FilesOf(const std::string& dir, const std::string& name) {
  std::vector<std::string> left;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string f = e.path().filename().string();
    if (f.rfind(name + ".", 0) == 0) left.push_back(f);
  }
  return left;
}

// One fabric process started with `ibemu up` in run directory `env` (a "VAR=value ..." prefix).
struct Started {
  pid_t pid = -1;
  std::string log;
};

class Lifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("lifecycle");
    ASSERT_FALSE(dir_.empty());
    name_ = "lc" + std::to_string(getpid());
    setenv("IBEMU_RUN_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    for (pid_t p : live_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  Started Up(const std::string& file, int n) {
    Started s;
    s.log = dir_ + "/up" + std::to_string(n) + ".log";
    s.pid = SpawnIbemu(
        {"up", file, "--sm", "external", "-q", "--name", name_, "-o", dir_ + "/results"}, s.log);
    live_.push_back(s.pid);
    return s;
  }
  CliResult Cli(const std::string& args) const {
    return Shell("timeout 60 " + std::string(IBEMU_BINARY) + " " + args + " --name " + name_);
  }
  CliResult Attach(const std::string& port) const {
    return Shell("timeout 60 " + std::string(IBEMU_BINARY) + " exec --name " + name_ + " --port " +
                 port + " -- smpquery -D nodeinfo 0");
  }
  // Whether `pid` has ended (and reaps it): `ibemu down` promises it has by the time it returns.
  bool Ended(pid_t pid) {
    int st = 0;
    bool ended = waitpid(pid, &st, WNOHANG) == pid;
    if (ended) std::erase(live_, pid);
    return ended;
  }
  void Reap(pid_t pid) {
    waitpid(pid, nullptr, 0);
    std::erase(live_, pid);
  }

  // Cycles of up / attach a tool / down on `file`; returns how many went entirely right, and the
  // first failure in `first_failure`.
  int Soak(const std::string& file, const std::string& port, int cycles,
           std::string* first_failure) {
    int good = 0;
    for (int i = 0; i < cycles; ++i) {
      Started s = Up(file, i);
      std::string why;
      CliResult st = Cli("status --wait 30");
      if (st.status != 0) why = "status: " + st.out;
      if (why.empty() && kTools) {
        CliResult a = Attach(port);
        if (a.status != 0 || a.out.find("NodeType:....") == std::string::npos)
          why = "attach: " + a.out;
      }
      CliResult d = Cli("down");
      if (why.empty() && d.status != 0) why = "down: " + d.out;
      if (why.empty() && !Ended(s.pid)) why = "ibemu down returned before the process ended";
      if (why.empty() && !FilesOf(dir_, name_).empty())
        why = "files left after down: " + FilesOf(dir_, name_)[0];
      if (!Ended(s.pid)) Reap(s.pid);
      if (why.empty())
        ++good;
      else if (first_failure->empty())
        *first_failure = "cycle " + std::to_string(i) + ": " + why + "\n" + ReadFile(s.log);
    }
    return good;
  }

  std::string dir_, name_;
  std::vector<pid_t> live_;
};

TEST_F(Lifecycle, TwoHundredCyclesOnTheTestBedAllAttach) {
  if (kTools && !HaveTool("smpquery")) GTEST_SKIP() << "infiniband-diags";
  const int cycles = kTools ? 200 : 40;
  std::string first;
  int good = Soak(Src("configs/topologies/testbed.topo"), "H1:1", cycles, &first);
  std::printf("soak, test bed: %d of %d cycles of up / %s / down went right\n", good, cycles,
              kTools ? "smpquery attached" : "status answered");
  EXPECT_EQ(good, cycles) << first;
}

TEST_F(Lifecycle, TwoHundredCyclesOnThe648NodeFatTreeAllAttach) {
  if (kTools && !HaveTool("smpquery")) GTEST_SKIP() << "infiniband-diags";
  std::string topo = dir_ + "/ft648.topo";
  ASSERT_EQ(Shell(std::string(IBEMU_BINARY) + " topology " +
                      Src("configs/scenarios/bench/fat-tree-648-uniform80.yaml") + " > " + topo,
                  false)
                .status,
            0);
  const int cycles = kTools ? 200 : 10;
  std::string first;
  int good = Soak(topo, "H1:1", cycles, &first);
  std::printf("soak, 648-node fat tree: %d of %d cycles of up / %s / down went right\n", good,
              cycles, kTools ? "smpquery attached" : "status answered");
  EXPECT_EQ(good, cycles) << first;
}

TEST_F(Lifecycle, AFabricKilledWithSigkillIsCleanedUpByTheNextUp) {
  if (kTools && !HaveTool("smpquery")) GTEST_SKIP() << "infiniband-diags";
  std::string topo = Src("configs/topologies/testbed.topo");
  const int cycles = 20;
  int good = 0;
  std::string first;
  for (int i = 0; i < cycles; ++i) {
    Started s = Up(topo, i);
    std::string why;
    if (Cli("status --wait 30").status != 0) why = "no status";
    if (why.empty() && kTools && Attach("H1:1").status != 0) why = "attach failed";
    if (why.empty() && i > 0 &&
        ReadFile(s.log).find("ended without going down") == std::string::npos)
      why = "the next up did not report removing the killed fabric's files: " + ReadFile(s.log);
    kill(s.pid, SIGKILL);
    Reap(s.pid);
    // Its files are still there; clients are told what happened instead of hanging.
    CliResult st = Cli("status");
    if (why.empty() &&
        (st.status != 2 || st.out.find("ended without going down") == std::string::npos))
      why = "status of a killed fabric: " + st.out;
    if (why.empty() && kTools) {
      auto t0 = Clock::now();
      CliResult a = Attach("H1:1");
      double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      if (a.status == 0 || a.out.find("does not answer") == std::string::npos ||
          a.out.find("ibemu up") == std::string::npos || secs > 10)
        why = "a tool on a killed fabric (" + std::to_string(secs) + " s): " + a.out;
    }
    if (why.empty())
      ++good;
    else if (first.empty())
      first = "cycle " + std::to_string(i) + ": " + why;
  }
  std::printf("SIGKILL: %d of %d cycles: killed fabric reported, cleaned by the next up\n", good,
              cycles);
  EXPECT_EQ(good, cycles) << first;
  // `ibemu down` of a killed fabric removes what it left and says so.
  CliResult d = Cli("down");
  EXPECT_EQ(d.status, 0) << d.out;
  EXPECT_NE(d.out.find("was not running"), std::string::npos) << d.out;
  EXPECT_TRUE(FilesOf(dir_, name_).empty());
}

TEST_F(Lifecycle, ASecondUpOfANameIsRefusedWhileTheFirstLives) {
  std::string topo = Src("configs/topologies/testbed.topo");
  Started s = Up(topo, 0);
  ASSERT_EQ(Cli("status --wait 30").status, 0);
  CliResult again = Shell(std::string(IBEMU_BINARY) + " up " + topo + " -q --name " + name_);
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.out.find("a fabric named '" + name_ + "' is already up (pid " +
                           std::to_string(s.pid) + ")"),
            std::string::npos)
      << again.out;
  EXPECT_NE(again.out.find("ibemu down --name " + name_), std::string::npos) << again.out;
  // The refused start touched nothing: the first still answers and goes down with its results.
  EXPECT_EQ(Cli("status").status, 0);
  CliResult d = Cli("down");
  EXPECT_EQ(d.status, 0) << d.out;
  EXPECT_TRUE(Ended(s.pid));
  EXPECT_TRUE(fs::exists(dir_ + "/results/summary.json"));
  CliResult none = Cli("down");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.out.find("no fabric named '" + name_ + "' is up in " + dir_), std::string::npos)
      << none.out;
}

TEST_F(Lifecycle, SigtermAndSigintWriteTheResults) {
  std::string scen = Src("configs/scenarios/fig2_4.yaml");
  for (int sig : {SIGTERM, SIGINT}) {
    fs::remove_all(dir_ + "/results");
    Started s = Up(scen, sig);
    ASSERT_EQ(Cli("status --wait 30").status, 0);
    kill(s.pid, sig);
    int st = 0;
    waitpid(s.pid, &st, 0);
    std::erase(live_, s.pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << ReadFile(s.log);
    EXPECT_TRUE(fs::exists(dir_ + "/results/summary.json")) << "signal " << sig;
    EXPECT_TRUE(fs::exists(dir_ + "/results/flows.csv")) << "signal " << sig;
    EXPECT_TRUE(FilesOf(dir_, name_).empty()) << "signal " << sig;
    // Nothing half-written is left under a temporary name.
    for (const auto& e : fs::directory_iterator(dir_ + "/results"))
      EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  }
}

// Where files go without IBEMU_RUN_DIR: $XDG_RUNTIME_DIR/ibemu, else /tmp/ibemu-<uid>, 0700.
TEST_F(Lifecycle, TheRunDirectoryIsPrivateAndWhereUsersExpectIt) {
  std::string topo = Src("configs/topologies/testbed.topo");
  std::string xdg = MakeTempDir("xdg");
  unsetenv("IBEMU_RUN_DIR");
  setenv("XDG_RUNTIME_DIR", xdg.c_str(), 1);
  Started s = Up(topo, 0);
  ASSERT_EQ(Cli("status --wait 30").status, 0) << ReadFile(s.log);
  struct stat st;
  ASSERT_EQ(lstat((xdg + "/ibemu").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  for (const char* f : {".lock", ".json", ".sock", ".umad.sock"}) {
    std::string p = xdg + "/ibemu/" + name_ + f;
    ASSERT_EQ(lstat(p.c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << p;
  }
  EXPECT_EQ(Cli("down").status, 0);
  EXPECT_TRUE(FilesOf(xdg + "/ibemu", name_).empty());

  unsetenv("XDG_RUNTIME_DIR");
  std::string deflt = "/tmp/ibemu-" + std::to_string(geteuid());
  s = Up(topo, 1);
  ASSERT_EQ(Cli("status --wait 30").status, 0) << ReadFile(s.log);
  ASSERT_EQ(lstat(deflt.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
  EXPECT_TRUE(fs::exists(deflt + "/" + name_ + ".umad.sock"));
  EXPECT_EQ(Cli("down").status, 0);
  EXPECT_TRUE(FilesOf(deflt, name_).empty());
  setenv("IBEMU_RUN_DIR", dir_.c_str(), 1);
  fs::remove_all(xdg);
}

TEST_F(Lifecycle, UnsafeRunDirectoriesAreRefusedBeforeAnythingStarts) {
  std::string topo = Src("configs/topologies/testbed.topo");
  std::string open_dir = MakeTempDir("open", 0777);
  CliResult r = Shell("IBEMU_RUN_DIR=" + open_dir + " " + IBEMU_BINARY + " up " + topo + " -q");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("run directory " + open_dir), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mode 0777"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(open_dir));
  std::string link = dir_ + "/link";
  fs::create_directory_symlink(dir_, link);
  r = Shell("IBEMU_RUN_DIR=" + link + " " + IBEMU_BINARY + " up " + topo + " -q");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("symbolic link"), std::string::npos) << r.out;
  r = Shell("IBEMU_RUN_DIR=" + dir_ + " " + IBEMU_BINARY + " up " + topo + " -q --name ../x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("fabric name '../x'"), std::string::npos) << r.out;
  fs::remove_all(open_dir);
}

// Another user may neither reach a fabric's sockets nor plant files where it will look.
TEST_F(Lifecycle, AnotherUserCannotConnectOrPreCreateFiles) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a client as nobody (setpriv)";
  if (!HaveTool("setpriv") || !fs::exists("/usr/bin/python3")) GTEST_SKIP() << "setpriv, python3";
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  // As nobody: connect to each socket, read the state, create a file in the run directory.
  auto probe = [&](const std::string& dir) {
    std::string py =
        "import socket,sys\n"
        "d,n=sys.argv[1],sys.argv[2]\n"
        "def t(what,f):\n"
        "  try:\n"
        "    f(); print(what,'ALLOWED')\n"
        "  except OSError as e: print(what,e.__class__.__name__)\n"
        "def conn(p):\n"
        "  s=socket.socket(socket.AF_UNIX); s.connect(p)\n"
        "t('connect-service',lambda: conn(d+'/'+n+'.sock'))\n"
        "t('connect-umad',lambda: conn(d+'/'+n+'.umad.sock'))\n"
        "t('read-state',lambda: open(d+'/'+n+'.json').read())\n"
        "t('create',lambda: open(d+'/planted.json','w'))\n";
    std::ofstream(dir_ + "/probe.py") << py;
    chmod(dir_.c_str(), 0711);  // nobody reaches the script, not the listing
    chmod((dir_ + "/probe.py").c_str(), 0644);
    CliResult r = Shell(as_nobody + "/usr/bin/python3 " + dir_ + "/probe.py " + dir + " " + name_);
    chmod(dir_.c_str(), 0700);
    return r.out;
  };
  std::string topo = Src("configs/topologies/testbed.topo");
  // The default kind of run directory (0700), and an override others may read (0755): the
  // sockets and the state file are the owner's alone in both.
  for (mode_t mode : {0700, 0755}) {
    std::string run = MakeTempDir("victim", mode);
    setenv("IBEMU_RUN_DIR", run.c_str(), 1);
    Started s = Up(topo, mode);
    ASSERT_EQ(Cli("status --wait 30").status, 0) << ReadFile(s.log);
    std::string out = probe(run);
    EXPECT_EQ(out.find("ALLOWED"), std::string::npos) << "mode " << std::oct << mode << ":\n"
                                                      << out;
    EXPECT_NE(out.find("connect-service PermissionError"), std::string::npos) << out;
    EXPECT_NE(out.find("connect-umad PermissionError"), std::string::npos) << out;
    EXPECT_NE(out.find("read-state PermissionError"), std::string::npos) << out;
    EXPECT_NE(out.find("create PermissionError"), std::string::npos) << out;
    EXPECT_EQ(Cli("status").status, 0);  // and the owner still can
    EXPECT_EQ(Cli("down").status, 0);
    fs::remove_all(run);
  }
  // Planting the run directory itself in a shared place (as /tmp/ibemu-<uid> would be): the
  // owner's `up` refuses a directory it does not own, before anything starts.
  std::string shared = MakeTempDir("shared", 01777);
  CliResult plant = Shell(as_nobody + "mkdir -m 0777 " + shared + "/ibemu");
  ASSERT_EQ(plant.status, 0) << plant.out;
  unsetenv("IBEMU_RUN_DIR");
  CliResult r = Shell("XDG_RUNTIME_DIR=" + shared + " " + IBEMU_BINARY + " up " + topo +
                      " -q --name " + name_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("belongs to uid 65534"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(shared + "/ibemu"));
  setenv("IBEMU_RUN_DIR", dir_.c_str(), 1);
  fs::remove_all(shared);
}

}  // namespace
}  // namespace ibemu::testing
