// Package dnsapi is heureka's DNS surface: an authoritative server for one
// zone (Config.Domain, "heureka." by default) that answers from the
// registry's current snapshot, so that clients which only know DNS
// (Hadoop's DNSDomainNameResolver, Kafka's bootstrap lookups, YARN's
// failover) find live instances without a code change. It is built on
// github.com/miekg/dns (docs/design.md says why).
//
// # Names
//
// Below the zone D (names.go):
//
//	<app>.service.D                     A/AAAA of every UP instance with an address; SRV
//	<state>.<app>.service.D             those whose role state is <state> (active, standby, observer, ...)
//	<rack labels>.rack.<app>.service.D  those on one rack: "/dc1/rack-a" is "dc1.rack-a.rack.<app>..."
//	<id labels>.id.<app>.service.D      one instance, whatever its status: A/AAAA, SRV, TXT
//	D                                   SOA
//
// and PTR for the reverse name of every registered IP address: its
// registered host names. An application's name is its name in lower case,
// dots kept; rack-path components and instance-ID parts are one label
// each, written by EncodeLabel ([a-z0-9-] as they are, every other byte
// as '_' and two hex digits), which is one to one. Which trailing labels
// are the application is decided by the registry: the longest run that
// names one.
//
// In a NameNode application (hdfs.ParseAppName) the plain name lists the
// active first, then standbys, then observers, shuffled only within each;
// every other list is shuffled. The role state is read by roleState, from
// heureka.MetaRoleState (hdfs.MetaHAState for a NameNode without it).
//
// # Answers
//
// A name outside the zone, a reverse name of an address no instance has,
// a class other than IN, zone transfers (AXFR, IXFR), and everything when
// anonymous reads are not allowed (Config.Anonymous) are REFUSED: heureka
// is never a recursive resolver. A name that stands for nothing is
// NXDOMAIN, and a name without records of the type asked is NODATA, both
// with the zone's SOA (its serial is the registry's version). ANY gets
// one HINFO "RFC8482" (RFC 8482 section 4.2). Every record's TTL is
// Config.TTL, 0 by default. A UDP answer fits 512 bytes or the client's
// EDNS0 size up to Config.MaxUDPSize; records that do not fit are left out
// and TC is set; over TCP the bound is 65,535 bytes, about 4,000 A
// records, past which TC is set as well.
//
// SRV records come only when asked for: the port is the registered port,
// the target the registered host name or, when that is an address, the
// instance's name in the zone, with the target's address in the additional
// section; in a NameNode application the priority is the rank (active 0).
// An instance's TXT record holds app, id, host, ip, port, status, rack,
// role_state, version, disk_used, disk_total, admin_state and full_percent
// as key=value strings, leaving out the empty ones.
//
// # Abuse
//
// Messages that do not parse, that carry other than one question, or more
// than one OPT record, get FORMERR (or nothing when even the header is
// short); other opcodes get NOTIMP. UDP queries are limited per source
// address (limit.go): past the limit half are answered with an empty TC
// reply and half dropped. TCP connections are bounded in number, and in
// time to read a message and to idle between messages. Config.Allow, when
// set, REFUSES sources outside it.
//
// # Concurrency
//
// A Server is safe for concurrent use once Open returns. UDP is served by
// one goroutine per CPU the process may use (udp.go), each reading a batch
// of datagrams at a time and sending their replies together (recvmmsg and
// sendmmsg on Linux, batch_linux.go; one at a time elsewhere) with scratch
// storage of its own; an address query takes the fast path (fast.go), which
// copies records packed once per set, and any other query is read and
// answered by miekg/dns. TCP is miekg/dns's server, a goroutine per
// connection. Answers are made from a view of
// the registry's snapshot (view.go), replaced when the registry's snapshot
// changes. Under a view, an application is a part per registry block (its
// UP instances by group: all, per role state, per rack), built once per
// block and shared by every view while the block lives, so a change costs
// the blocks it touched; a group (what one name answers) is put together
// from the blocks' parts when first asked, under the application's lock,
// and its address records are made once. Nothing is modified once built.
//
// # What it does not do
//
// No recursion, forwarding, zone transfers, DNSSEC, dynamic updates, or
// NOTIFY. It does not serve NS or glue for the zone: operators name the
// servers in their resolvers' forwarding, not by delegation. It writes
// nothing to the registry.
package dnsapi
