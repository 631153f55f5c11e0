// Package ui holds the dashboard's end-to-end test: the real server runs
// in-process on a loopback port and Debian's headless Chromium loads the
// page, driven over the DevTools protocol (a small client in the tests,
// speaking WebSocket itself). The test checks that the page loads, that a
// newly registered instance appears and that an instance going DOWN shows
// as DOWN, all without reloading, and that instance data is shown as text,
// never run as markup.
//
// It needs /usr/bin/chromium (apt-get install chromium). Without it the
// test is skipped, except when CI=true, where it fails. Set
// HEUREKA_SCREENSHOT_DIR to keep screenshots of the page.
package ui
