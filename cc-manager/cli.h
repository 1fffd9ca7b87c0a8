// The CLI's side: one request to the daemon over its ZeroMQ socket, and the reply as people read
// it (or as JSON, from the protobuf message).
#pragma once
#include <string>

#include "ccmgr.pb.h"

namespace ibemu::ccmgr {

// Sends `q` to the daemon named `name`; false with `error` set when nobody answers in time.
bool Ask(const std::string& name, const Request& q, int timeout_ms, Reply* r, std::string* error);

std::string FormatNodes(const Reply& r);     // `show` without a node: one line per CCA
std::string FormatNode(const NodeState& n);  // `show <node>`: the settings read back
std::string FormatEvent(const Event& e);
std::string FormatStatus(const Status& s);
std::string ToJson(const google::protobuf::Message& m);

}  // namespace ibemu::ccmgr
