// Package jmxjson holds what reading the JSON of Hadoop's metrics servlet
// (/jmx, also HBase's) needs beyond encoding/json: Sanitize, for the bare
// NaN and Infinity tokens it writes for non-finite doubles. It keeps no
// state; Sanitize is safe for concurrent use.
package jmxjson
