// Reads and writes the topology file format that `ibnetdiscover` (infiniband-diags) prints and that
// `ibsim` loads as its net file, so a real fabric's dump, an ibsim example and our own generated
// fabrics all go through one parser.
//
// Accepted input (a superset of both tools' output/input):
//   - Node sections: a header line `Switch|Ca|Hca|Rt <num_ports> "<id>" [# comment]` followed by
//     one line per connected port. As in ibsim, a blank line or any other non-port, non-comment
//     line ends the section; `#` lines inside a section are comments. The node description is the
//     quoted string at the start of the header's comment, else (ibsim) the unquoted comment text up
//     to " base port ", " enhanced port ", " lid " or " lmc ". `Rt` nodes become channel adapters:
//     inside one subnet a router is an end node, and NodeType has no router.
//   - Port lines: `[p][ext n](portguid) "<remote id>"[q][ext n](portguid) [w=.. s=.. e=..] # ...`.
//     `[ext n]` and the GUIDs are optional and ignored; a missing `[q]` means remote port 1
//     (ibsim). The link rate is the last `<width>x<speed>` token of the comment outside quoted
//     strings (ibnetdiscover prints the active rate there, e.g. `4xQDR`); else ibsim's w=/s=/e=
//     options (LinkWidthEnabled, LinkSpeedEnabled, LinkSpeedExtEnabled bit masks, highest bit
//     wins); else the file's width=/speed=/extspeed= lines; else `default_rate`.
//   - `vendid=`, `devid=`, `sysimgguid=` are checked and ignored (Topology does not model them).
//     `switchguid=`, `caguid=`, `hcaguids=`, `rtguid=` set the GUID of the next node of that type,
//     with ibsim's counting afterwards (a switch takes one GUID, a CA num_ports + 1), so a hand-
//     written ibsim file gets the GUIDs ibsim would give it; `guid=` sets the next node's GUID
//     whatever its type. Without any, ibsim's bases apply (switch 0x200000, CA 0x100000; routers,
//     for which ibsim has no base, 0x300000).
//   - ibnetdiscover -g decoration (`Chassis ...`, `Hostname: ...`, `Non-Chassis Nodes`) is skipped.
//     ibsim's `@alias`, `include`, `module`, `do` and `pdebug` are refused: they are not topology.
//
// Each cable is listed from both ends; both listings must agree. The cable's rate is that of the
// first listing in the file. Cable lengths are not part of the format and read back as 2 m.
//
// Errors are TopologyError with the text `file:line: field: message`; field is one of syntax,
// node, port, cable, rate, guid.
#pragma once
#include <iosfwd>
#include <string>

#include "common/link/link_rate.h"
#include "common/topology/topology.h"

namespace ibemu::topology {

// `filename` is used only in error messages and as the topology's name.
Topology ParseIbnetdiscover(std::istream& in, const std::string& filename,
                            link::LinkRate default_rate);

// Throws TopologyError naming `path` when the file cannot be opened.
Topology ParseIbnetdiscoverFile(const std::string& path, link::LinkRate default_rate);

// Writes `topo` in ibnetdiscover's layout (vendid/devid/sysimgguid/switchguid|caguid lines, then
// the node header and one line per connected port, both ends of every cable listed), in node
// order so that parsing the text back gives the same node indices, names, descriptions, GUIDs,
// port counts, cables and rates. Two deliberate differences from a live ibnetdiscover dump:
//   - the quoted id is Node::name, not "S-<guid>"/"H-<guid>": names are how scenarios and
//     results refer to nodes, and a topology read from a real dump already has guid-style names;
//   - every LID is written as 0 and LMC as 0. A topology has no LIDs (the SM assigns them), and
//     0 is what ibnetdiscover prints for ports no SM has configured. The `lid N` is still written
//     because ibsim reads the port's rate only from a comment of the form `lid N <w>x<speed>`.
// ibsim 0.10 (Debian's ibsim-utils) loads this output with the same GUIDs, port GUIDs and rates.
// Throws TopologyError when a name or description cannot be written (a '"' or control character,
// or '#'/'@' in a name, which ibsim reserves).
void WriteIbnetdiscover(const Topology& topo, std::ostream& out);

}  // namespace ibemu::topology
