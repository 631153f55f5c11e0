// Package ui holds the dashboard's end-to-end tests: the real server binary
// (HEUREKA_BIN, or built from the repository by internal/proctest) runs on a
// loopback port and Debian's headless Chromium loads the page, driven over
// the DevTools protocol with chromedp. It is its own module, so chromedp
// stays out of the product's go.mod.
//
// TestDashboardLive checks that the page loads, that a newly registered
// instance appears, that an instance going DOWN shows as DOWN in its row
// and as a DOWN-coloured square in the rack map, that the filter narrows
// the tables, and that a cancelled one disappears, all without reloading;
// and that instance data is shown as text, never run as markup.
// TestDashboardDNSLine checks that, with --dns-listen, the header names the
// DNS zone, its address and the queries answered, and that the count
// follows queries.
//
// TestDashboardRoles registers a YARN pair, HBase masters and
// RegionServers and a ZooKeeper ensemble (and a DataNode, which stays in
// its rack map) and checks the other systems' section: a card per
// cluster, its members by role and rack with their role states, the lead
// marked; a ResourceManager failover moves the mark and a dead server
// shows DOWN without a reload; at 1000 and 700 px nothing scrolls
// sideways (screenshots roles-1400.png, roles-1000.png, roles-700.png).
//
// TestDashboardAtScale registers HEUREKA_UI_DATANODES DataNodes (20,000
// unless set) on 40 racks and an HA pair of NameNodes over HTTP, a bounded
// number at a time, and logs what it measured in Chromium: the first paint
// of the rack map, the JS heap, how soon a DOWN DataNode's square turns,
// filter keystrokes answered and painted, and a storm of re-registrations.
// It asserts what the page shows and the 50 MB heap bound, not the times.
// TestDashboardHundredThousand (100,000 instances in 50 applications)
// runs only with HEUREKA_UI_100K=1.
//
// Chromium is /usr/bin/chromium (apt-get install chromium). Without it the
// tests skip, except when CI=true, where they fail. Set
// HEUREKA_SCREENSHOT_DIR to keep screenshots of the page.
package ui
