// Generated fabrics: the thesis test bed and the regular topologies the experiments sweep. Every
// generator is deterministic (same arguments, same node order, names, GUIDs and cables), adds the
// switches first and the hosts last, and returns a Topology that passes Validate().
//
// Shared conventions:
//   - Hosts are single-port channel adapters (port 1 cabled), described "<name> HCA-1" as OFED
//     hosts describe themselves ("<hostname> <device>").
//   - GUIDs are Topology::AddNode's, unique by node index.
//   - Port counts: fat trees use the real switch radix (unused ports stay unconnected, as on the
//     hardware); tori and dragonflies get exactly the ports their layout needs.
//   - Bad arguments throw TopologyError "<generated>: <argument>: message".
#pragma once
#include <vector>

#include "common/link/link_rate.h"
#include "common/topology/topology.h"

namespace ibemu::topology {

// The test bed's switches are InfiniScale IV (MT48438) chips with 36 ports; keeping the real
// radix means the fabric manager sees the NumPorts it saw on the hardware.
constexpr int kTestBedSwitchPorts = 36;

// Switch S1 with hosts H1..H3 on ports 1..3, switch S2 with H4..H7 on ports 1..4, and one
// inter-switch cable S1[4] - S2[5] (the next free port on each). Hosts are described
// "H<n> mlx4_0" (ConnectX-2), switches "S<n> Infiniscale-IV Mellanox Technologies".
Topology TestBed(link::LinkRate host_link, link::LinkRate isl);

// k-ary n-tree (Petrini and Vanneschi, 1997): n levels of k^(n-1) switches with 2k ports and k^n
// hosts. Switch <w, l> (w an (n-1)-digit base-k word, l = 0 at the roots) is named "L<l>-S<w>"
// with w as a number; host p (0-based) is "H<p+1>" on port p%k+1 of leaf switch L<n-1>-S<p/k>.
// Ports 1..k go down, k+1..2k up: <w, l> up port k+1+j reaches the switch at level l-1 whose word
// is w with digit l-1 set to j, at that switch's down port 1+w[l-1]. Root up ports stay free.
Topology KaryNTree(int k, int n, link::LinkRate rate);

// Two-level fat tree: `spines` spine switches "Spine1..", `leaves` leaf switches "Leaf1..", all
// with `radix` ports. Leaf i has hosts on ports 1..hosts_per_leaf (hosts numbered "H1.." leaf by
// leaf) and one cable to every spine: leaf port hosts_per_leaf+j+1 to port i+1 of spine j.
// Needs hosts_per_leaf + spines <= radix and leaves <= radix.
Topology FatTree2Level(int radix, int leaves, int spines, int hosts_per_leaf, link::LinkRate rate);

// The Sun Datacenter InfiniBand Switch 648: 54 36-port switches, 36 leaves with 18 hosts and 18
// uplinks each (one to each of 18 spines): 648 hosts, 1296 cables.
Topology FatTree648(link::LinkRate rate);

// The largest three-level fat tree of `radix`-port switches (radix even, h = radix/2): radix
// pods, each h leaf switches "L<pod>.<i>" with h hosts and h aggregation switches "A<pod>.<j>"
// (every leaf of the pod cabled to every aggregation switch of the pod), and h*h core switches
// "C<j>.<m>", core C<j>.<m> cabled to aggregation switch j of every pod. radix^3/4 hosts ("H1.."
// leaf by leaf, pod by pod): 11,664 with 36-port switches, in 1,620 switches. Leaf ports 1..h
// go to hosts and h+1+j to A<pod>.<j> port 1+i; aggregation ports h+1+m go to C<j>.<m> port
// 1+pod. Switches are added cores first, then pod by pod aggregation and leaves.
Topology FatTree3Level(int radix, link::LinkRate rate);

// Torus (wrap) or mesh (no wrap) of switches with `hosts_per_switch` hosts each. Switch
// coordinates (c0, c1, ...), the last dimension varying fastest, name it "S<c0>.<c1>..." and its
// hosts "S"→"H" plus "-<port>" ("H2.0-1" is on port 1 of S2.0). Ports 1..hosts_per_switch go to
// hosts, then each dimension d has two ports: hosts_per_switch+2d+1 towards c_d-1 and
// hosts_per_switch+2d+2 towards c_d+1, so a port number always means the same direction.
// Each ring of size s gets s cables with wrap, s-1 without; with wrap a ring of size 2 gets one
// cable, not two parallel ones (the wrap-around link would join the same two switches
// again), and a ring of size 1 gets none, leaving those direction ports free.
Topology Torus(std::vector<int> dims, int hosts_per_switch, link::LinkRate rate, bool wrap);

// Dragonfly (Kim, Dally, Scott and Abts, 2008): g groups of a routers, each router with p hosts,
// a-1 local ports (routers of a group are fully connected) and h global ports; balanced when
// a = 2p = 2h. Router r of group i is "G<i>-R<r>", its hosts "G<i>-R<r>-H<port>". Ports: 1..p
// hosts, p+1..p+a-1 local (to the other routers in increasing order), p+a..p+a+h-1 global.
// Global links use the consecutive ("absolute") arrangement: group i numbers its a*h global ports
// router-major (port j of router r is global port r*h+j) and gives them to the other groups in
// increasing order, cycling floor(a*h/(g-1)) times; so group i's global port m*(g-1)+(t<i ? t :
// t-1) joins group t's port m*(g-1)+(i<t ? i : i-1). Every pair of groups gets floor(a*h/(g-1))
// cables; spare global ports stay free. Needs a*h >= g-1.
Topology Dragonfly(int a, int p, int h, int g, link::LinkRate rate);

}  // namespace ibemu::topology
