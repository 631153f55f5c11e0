// Package alert holds the end-to-end tests of `heureka alert`: the real
// heureka binary (built by the tests) follows a real server running
// in-process on a loopback port and forwards to a real Prometheus
// Alertmanager (Debian's prometheus-alertmanager, started by the tests on
// loopback with a temporary configuration and storage directory) and to a
// webhook receiver. The tests check that alerts fire and resolve in
// Alertmanager, that a forwarder whose connection drops resumes without
// repeating or missing an alert, and that a YARN cluster without an
// active ResourceManager fires only once that has lasted --for.
//
// The Alertmanager tests need /usr/bin/prometheus-alertmanager (apt-get
// install prometheus-alertmanager). Without it they are skipped, except
// when CI=true, where they fail.
package alert
