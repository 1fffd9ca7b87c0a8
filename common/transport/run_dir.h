// Where a fabric that is up keeps its sockets and state, and how every party (the `ibemu up`
// service, the `ibemu` client subcommands, the host libraries) agrees on the same paths.
//
// The run directory is per user and private (docs/lifecycle.md): $IBEMU_RUN_DIR when set,
// otherwise $XDG_RUNTIME_DIR/ibemu, otherwise /tmp/ibemu-<uid>. It is created with mode 0700 and
// refused when it is a symlink, belongs to another user, or is writable by others, because its
// sockets accept MADs that reprogram the fabric and its state files name the process to signal.
#pragma once
#include <string>

namespace ibemu::transport {

struct RunDir {
  std::string path;
  std::string source;  // "IBEMU_RUN_DIR", "XDG_RUNTIME_DIR" or "default": for messages
};

// The run directory this process would use, from the environment; nothing is created.
RunDir ResolveRunDir();

// Creates the run directory if it is missing (mode 0700, parents of the default ones too) and
// checks it is safe to use. Returns "" or a message naming the directory and what is wrong.
std::string PrepareRunDir(const RunDir& dir);
// The same checks without creating anything; a missing directory is not an error.
std::string CheckRunDir(const RunDir& dir);

// A fabric name becomes part of file names and of an ipc:// endpoint: letters, digits, '.', '_'
// and '-', not starting with '.', at most 64 characters. Returns "" or why not.
std::string CheckFabricName(const std::string& name);

// The files of fabric `name` in run directory `dir`.
struct FabricFiles {
  std::string lock;     // held (OFD write lock) by the live instance for its whole life
  std::string state;    // JSON written (write then rename) once the instance answers
  std::string service;  // the control socket of `ibemu status|down|link`
  std::string umad;     // the MAD channel of hostlib/umad (common/transport/umad.proto)
  // The same channel as a Unix SOCK_SEQPACKET socket, one message per packet, which the service
  // loop reads itself: no ZeroMQ I/O thread on either side (emulator/fabric/local_channel.h).
  std::string direct;
};
FabricFiles FilesOf(const std::string& dir, const std::string& name);

// An ipc:// endpoint for a socket path, or "" with `err` set when the path does not fit in
// sockaddr_un (ZeroMQ would fail with a bare ENAMETOOLONG).
std::string IpcEndpoint(const std::string& socket_path, std::string* err);

}  // namespace ibemu::transport
