package eureka

import (
	"strings"
	"testing"

	"github.com/heureka-project/heureka"
)

// Registration bodies in the shapes real clients send (eureka-spec §3.1,
// client-quirks.md "What clients send"). Written for these tests.

// springBody is what the Java and Spring Cloud clients POST.
const springBody = `{"instance":{
  "instanceId":"10.0.0.5:orders:8080","hostName":"10.0.0.5","app":"ORDERS","ipAddr":"10.0.0.5",
  "status":"UP","overriddenStatus":"UNKNOWN",
  "port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},
  "countryId":1,
  "dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
  "leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90,"registrationTimestamp":0,
               "lastRenewalTimestamp":0,"evictionTimestamp":0,"serviceUpTimestamp":0},
  "metadata":{"management.port":"8080","zone":"z1"},
  "homePageUrl":"http://10.0.0.5:8080/","statusPageUrl":"http://10.0.0.5:8080/actuator/info",
  "healthCheckUrl":"http://10.0.0.5:8080/actuator/health",
  "vipAddress":"orders","secureVipAddress":"orders",
  "isCoordinatingDiscoveryServer":"false",
  "lastUpdatedTimestamp":"1717171717000","lastDirtyTimestamp":"1717171717000"}}`

func springWant() *heureka.Instance {
	return &heureka.Instance{
		ID: "10.0.0.5:orders:8080", App: "ORDERS", HostName: "10.0.0.5", IPAddr: "10.0.0.5",
		Status: heureka.StatusUp, OverriddenStatus: heureka.StatusUnknown,
		Port: heureka.Port{Number: 8080, Enabled: true}, SecurePort: heureka.Port{Number: 443},
		CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Lease:       heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90},
		Metadata:    heureka.MetadataOf(map[string]string{"management.port": "8080", "zone": "z1"}),
		HomePageURL: "http://10.0.0.5:8080/", StatusPageURL: "http://10.0.0.5:8080/actuator/info",
		HealthCheckURL: "http://10.0.0.5:8080/actuator/health", VIPAddress: "orders", SecureVIPAddress: "orders",
		LastUpdatedTimestamp: 1717171717000, LastDirtyTimestamp: 1717171717000,
	}
}

// springNumbersBody has Spring's numeric timestamps and boolean flag.
const springNumbersBody = `{"instance":{"instanceId":"a:orders:1","hostName":"a","app":"orders","ipAddr":"10.0.0.1",
  "port":{"$":1,"@enabled":true},"isCoordinatingDiscoveryServer":false,
  "lastUpdatedTimestamp":1717171717001,"lastDirtyTimestamp":1717171717002,"countryId":"2"}}`

// fargoJSONBody is hudl/fargo in JSON mode: string ports, MyDataCenterInfo,
// an empty overriddenstatus and a zeroed lease.
const fargoJSONBody = `{"instance":{"hostName":"dn1.rack1","app":"hdfs-datanode","ipAddr":"10.1.0.11",
  "vipAddress":"hdfs-datanode","secureVipAddress":"","status":"UP","overriddenstatus":"",
  "port":{"$":"9866","@enabled":"true"},"securePort":{"$":"9865","@enabled":"false"},
  "homePageUrl":"","statusPageUrl":"","healthCheckUrl":"","countryId":1,
  "dataCenterInfo":{"@class":"com.netflix.appinfo.MyDataCenterInfo","name":"MyOwn"},
  "leaseInfo":{"renewalIntervalInSecs":0,"durationInSecs":0,"registrationTimestamp":0,
               "lastRenewalTimestamp":0,"evictionTimestamp":0,"serviceUpTimestamp":0},
  "metadata":{"rack":"/dc1/rack1","disk_used":"0.42"}}}`

func fargoWant() *heureka.Instance {
	return &heureka.Instance{
		ID: "dn1.rack1", App: "HDFS-DATANODE", HostName: "dn1.rack1", IPAddr: "10.1.0.11",
		Status: heureka.StatusUp, OverriddenStatus: heureka.StatusUnknown,
		Port: heureka.Port{Number: 9866, Enabled: true}, SecurePort: heureka.Port{Number: 9865},
		CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
		Lease:      heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90},
		Metadata:   heureka.MetadataOf(map[string]string{"rack": "/dc1/rack1", "disk_used": "0.42"}),
		VIPAddress: "hdfs-datanode",
	}
}

// fargoXMLBody is fargo's default XML: dataCenterInfo without a class,
// port and securePort last, metadata keys as written.
const fargoXMLBody = `<instance>
  <hostName>dn1.rack1</hostName>
  <app>hdfs-datanode</app>
  <ipAddr>10.1.0.11</ipAddr>
  <vipAddress>hdfs-datanode</vipAddress>
  <secureVipAddress></secureVipAddress>
  <status>UP</status>
  <overriddenstatus></overriddenstatus>
  <homePageUrl></homePageUrl>
  <statusPageUrl></statusPageUrl>
  <healthCheckUrl></healthCheckUrl>
  <countryId>1</countryId>
  <dataCenterInfo>
    <name>MyOwn</name>
  </dataCenterInfo>
  <leaseInfo>
    <renewalIntervalInSecs>0</renewalIntervalInSecs>
    <durationInSecs>0</durationInSecs>
    <registrationTimestamp>0</registrationTimestamp>
    <lastRenewalTimestamp>0</lastRenewalTimestamp>
    <evictionTimestamp>0</evictionTimestamp>
    <serviceUpTimestamp>0</serviceUpTimestamp>
  </leaseInfo>
  <metadata><rack>/dc1/rack1</rack><disk__used>0.42</disk__used></metadata>
  <port enabled="true">9866</port>
  <securePort enabled="false">9865</securePort>
</instance>`

// jsMinimalBody is eureka-js-client's README example: a bare port number
// and dataCenterInfo without @class; nothing else configured.
const jsMinimalBody = `{"instance":{"app":"jqservice","hostName":"localhost","ipAddr":"127.0.0.1",
  "port":8080,"vipAddress":"jq.test.something.com","dataCenterInfo":{"name":"MyOwn"}}}`

// jsBooleanBody is the other README example: @enabled as a JSON boolean,
// and metadata values the user's config gave as numbers and booleans.
const jsBooleanBody = `{"instance":{"instanceId":"js-1","app":"jqservice","hostName":"localhost","ipAddr":"127.0.0.1",
  "port":{"$":8080,"@enabled":true},"vipAddress":"jq","statusPageUrl":"http://localhost:8080/info",
  "dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
  "metadata":{"weight":10,"canary":true,"ratio":0.5,"gone":null}}}`

// pyBody is py_eureka_client: lower-case overriddenstatus, string
// timestamps and flags.
const pyBody = `{"instance":{"instanceId":"10.0.0.9:py-svc:9090","hostName":"10.0.0.9","app":"PY-SVC","ipAddr":"10.0.0.9",
  "status":"UP","overriddenstatus":"OUT_OF_SERVICE",
  "port":{"$":9090,"@enabled":"true"},"securePort":{"$":9443,"@enabled":"false"},"countryId":1,
  "dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},
  "leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90,"registrationTimestamp":0,"lastRenewalTimestamp":0,"evictionTimestamp":0,"serviceUpTimestamp":0},
  "metadata":{"management.port":"9090"},
  "homePageUrl":"http://10.0.0.9:9090/","statusPageUrl":"http://10.0.0.9:9090/info","healthCheckUrl":"http://10.0.0.9:9090/health",
  "vipAddress":"py-svc","secureVipAddress":"py-svc","isCoordinatingDiscoveryServer":"false",
  "lastUpdatedTimestamp":"1717171717000","lastDirtyTimestamp":"1717171716000","actionType":"ADDED"}}`

// javaXMLBody is an XStream-style registration (pretty-printed, escaped
// metadata names, the empty-map marker on Amazon's side is absent).
const javaXMLBody = `<?xml version="1.0" encoding="UTF-8"?>
<!-- registered by hand -->
<instance>
  <instanceId>i-0abc</instanceId>
  <hostName>ec2-1-2-3-4.compute-1.amazonaws.com</hostName>
  <app>ORDERS</app>
  <ipAddr>10.0.0.5</ipAddr>
  <status>STARTING</status>
  <overriddenStatus>UNKNOWN</overriddenStatus>
  <port enabled="true">8080</port>
  <securePort enabled="true">8443</securePort>
  <countryId>1</countryId>
  <dataCenterInfo class="com.netflix.appinfo.AmazonInfo">
    <name>Amazon</name>
    <metadata>
      <instance-id>i-0abc</instance-id>
      <availability-zone>us-east-1a</availability-zone>
    </metadata>
  </dataCenterInfo>
  <leaseInfo><renewalIntervalInSecs>10</renewalIntervalInSecs><durationInSecs>30</durationInSecs></leaseInfo>
  <metadata><disk__used>0.5</disk__used><price_-usd>3</price_-usd><note>a &amp; b &lt;c&gt; &#13;</note><cdata><![CDATA[<x>]]></cdata></metadata>
  <vipAddress>orders</vipAddress>
  <isCoordinatingDiscoveryServer>false</isCoordinatingDiscoveryServer>
  <lastUpdatedTimestamp>1717171717000</lastUpdatedTimestamp>
  <lastDirtyTimestamp>1717171717000</lastDirtyTimestamp>
</instance>`

func TestDecodeClientBodies(t *testing.T) {
	cases := []struct {
		name string
		f    Format
		body string
		want *heureka.Instance
	}{
		{"java/spring JSON", JSON, springBody, springWant()},
		{"spring numeric timestamps", JSON, springNumbersBody, &heureka.Instance{
			ID: "a:orders:1", App: "ORDERS", HostName: "a", IPAddr: "10.0.0.1",
			Status: heureka.StatusUp, OverriddenStatus: heureka.StatusUnknown,
			Port: heureka.Port{Number: 1, Enabled: true}, SecurePort: heureka.Port{Number: 7002},
			CountryID: 2, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
			Lease: heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90}, Metadata: heureka.Metadata{},
			LastUpdatedTimestamp: 1717171717001, LastDirtyTimestamp: 1717171717002,
		}},
		{"fargo JSON", JSON, fargoJSONBody, fargoWant()},
		{"fargo XML", XML, fargoXMLBody, fargoWant()},
		{"js-client minimal", JSON, jsMinimalBody, &heureka.Instance{
			ID: "localhost", App: "JQSERVICE", HostName: "localhost", IPAddr: "127.0.0.1",
			Status: heureka.StatusUp, OverriddenStatus: heureka.StatusUnknown,
			Port: heureka.Port{Number: 8080, Enabled: true}, SecurePort: heureka.Port{Number: 7002},
			CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
			Lease: heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90}, Metadata: heureka.Metadata{},
			VIPAddress: "jq.test.something.com",
		}},
		{"js-client boolean enabled", JSON, jsBooleanBody, &heureka.Instance{
			ID: "js-1", App: "JQSERVICE", HostName: "localhost", IPAddr: "127.0.0.1",
			Status: heureka.StatusUp, OverriddenStatus: heureka.StatusUnknown,
			Port: heureka.Port{Number: 8080, Enabled: true}, SecurePort: heureka.Port{Number: 7002},
			CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
			Lease:      heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90},
			Metadata:   heureka.MetadataOf(map[string]string{"weight": "10", "canary": "true", "ratio": "0.5"}),
			VIPAddress: "jq", StatusPageURL: "http://localhost:8080/info",
		}},
		{"py_eureka_client", JSON, pyBody, &heureka.Instance{
			ID: "10.0.0.9:py-svc:9090", App: "PY-SVC", HostName: "10.0.0.9", IPAddr: "10.0.0.9",
			Status: heureka.StatusUp, OverriddenStatus: heureka.StatusOutOfService,
			Port: heureka.Port{Number: 9090, Enabled: true}, SecurePort: heureka.Port{Number: 9443},
			CountryID: 1, DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterMyOwn},
			Lease:       heureka.LeaseInfo{RenewalIntervalSecs: 30, DurationSecs: 90},
			Metadata:    heureka.MetadataOf(map[string]string{"management.port": "9090"}),
			HomePageURL: "http://10.0.0.9:9090/", StatusPageURL: "http://10.0.0.9:9090/info", HealthCheckURL: "http://10.0.0.9:9090/health",
			VIPAddress: "py-svc", SecureVIPAddress: "py-svc",
			LastUpdatedTimestamp: 1717171717000, LastDirtyTimestamp: 1717171716000, ActionType: heureka.ActionAdded,
		}},
		{"XStream XML", XML, javaXMLBody, &heureka.Instance{
			ID: "i-0abc", App: "ORDERS", HostName: "ec2-1-2-3-4.compute-1.amazonaws.com", IPAddr: "10.0.0.5",
			Status: heureka.StatusStarting, OverriddenStatus: heureka.StatusUnknown,
			Port: heureka.Port{Number: 8080, Enabled: true}, SecurePort: heureka.Port{Number: 8443, Enabled: true},
			CountryID: 1,
			DataCenter: heureka.DataCenterInfo{Name: heureka.DataCenterAmazon,
				Metadata: heureka.MetadataOf(map[string]string{"instance-id": "i-0abc", "availability-zone": "us-east-1a"})},
			Lease:      heureka.LeaseInfo{RenewalIntervalSecs: 10, DurationSecs: 30},
			Metadata:   heureka.MetadataOf(map[string]string{"disk_used": "0.5", "price$usd": "3", "note": "a & b <c> \r", "cdata": "<x>"}),
			VIPAddress: "orders", LastUpdatedTimestamp: 1717171717000, LastDirtyTimestamp: 1717171717000,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeInstance([]byte(c.body), c.f)
			if err != nil {
				t.Fatal(err)
			}
			assertSameInstance(t, got, c.want)
			if f, err := SniffFormat([]byte(c.body), ""); err != nil || f != c.f {
				t.Errorf("SniffFormat = %v, %v; want %v", f, err, c.f)
			}
		})
	}
}

// TestDecodeLeniency has one row per line of the eureka-spec §4.2 matrix,
// plus the extra rules of the package contract.
func TestDecodeLeniency(t *testing.T) {
	type check func(t *testing.T, in *heureka.Instance)
	port := func(which string, n int, enabled bool) check {
		return func(t *testing.T, in *heureka.Instance) {
			p := in.Port
			if which == "securePort" {
				p = in.SecurePort
			}
			if p != (heureka.Port{Number: n, Enabled: enabled}) {
				t.Errorf("%s = %+v, want {%d %v}", which, p, n, enabled)
			}
		}
	}
	both := func(cs ...check) check {
		return func(t *testing.T, in *heureka.Instance) {
			for _, c := range cs {
				c(t, in)
			}
		}
	}
	field := func(name string, get func(*heureka.Instance) any, want any) check {
		return func(t *testing.T, in *heureka.Instance) {
			if got := get(in); got != want {
				t.Errorf("%s = %#v, want %#v", name, got, want)
			}
		}
	}
	status := func(want heureka.Status) check {
		return field("status", func(in *heureka.Instance) any { return in.Status }, want)
	}
	override := func(want heureka.Status) check {
		return field("overriddenStatus", func(in *heureka.Instance) any { return in.OverriddenStatus }, want)
	}
	dc := func(want string) check {
		return field("dataCenter.name", func(in *heureka.Instance) any { return in.DataCenter.Name }, want)
	}
	id := func(want string) check { return field("id", func(in *heureka.Instance) any { return in.ID }, want) }
	md := func(want map[string]string) check {
		return func(t *testing.T, in *heureka.Instance) {
			if in.Metadata.Len() != len(want) {
				t.Errorf("metadata = %v, want %v", in.Metadata, want)
			}
			for k, v := range want {
				if got, ok := in.Metadata.Lookup(k); !ok || got != v {
					t.Errorf("metadata = %v, want %v", in.Metadata, want)
				}
			}
		}
	}
	lease := func(r, d int) check {
		return field("lease", func(in *heureka.Instance) any { return in.Lease }, heureka.LeaseInfo{RenewalIntervalSecs: r, DurationSecs: d})
	}
	const base = `"hostName":"h","app":"a","ipAddr":"1.2.3.4"`
	cases := []struct {
		name string
		f    Format
		body string
		ok   check
	}{
		{"wrapped", JSON, `{"instance":{` + base + `}}`, id("h")},
		{"no wrapper", JSON, `{` + base + `,"instanceId":"x"}`, id("x")},
		{"port bare number", JSON, `{` + base + `,"port":8080}`, both(port("port", 8080, true), port("securePort", 7002, false))},
		{"port bare string", JSON, `{` + base + `,"port":"8080","securePort":" 8443 "}`, both(port("port", 8080, true), port("securePort", 8443, false))},
		{"port $ as string", JSON, `{` + base + `,"port":{"$":"9866","@enabled":"true"}}`, port("port", 9866, true)},
		{"port $ as float", JSON, `{` + base + `,"port":{"$":8080.0}}`, port("port", 8080, true)},
		{"@enabled boolean", JSON, `{` + base + `,"port":{"$":1,"@enabled":false},"securePort":{"$":2,"@enabled":true}}`, both(port("port", 1, false), port("securePort", 2, true))},
		{"@enabled other case", JSON, `{` + base + `,"securePort":{"$":2,"@enabled":"TRUE"}}`, port("securePort", 2, true)},
		{"@enabled missing", JSON, `{` + base + `,"port":{"$":1},"securePort":{"$":2}}`, both(port("port", 1, true), port("securePort", 2, false))},
		{"@enabled nonsense means default", JSON, `{` + base + `,"port":{"$":1,"@enabled":"yes"},"securePort":{"$":2,"@enabled":"yes"}}`, both(port("port", 1, true), port("securePort", 2, false))},
		{"$ missing", JSON, `{` + base + `,"port":{"@enabled":"false"}}`, port("port", 7001, false)},
		{"ports missing", JSON, `{` + base + `}`, both(port("port", 7001, true), port("securePort", 7002, false))},
		{"ports null", JSON, `{` + base + `,"port":null,"securePort":null}`, both(port("port", 7001, true), port("securePort", 7002, false))},
		{"XML port without enabled", XML, `<instance><port>80</port><securePort>443</securePort></instance>`, both(port("port", 80, true), port("securePort", 443, false))},
		{"XML port enabled attributes", XML, `<instance><port enabled="false">80</port><securePort enabled="true">443</securePort></instance>`, both(port("port", 80, false), port("securePort", 443, true))},
		{"XML empty port element", XML, `<instance><port enabled="true"/></instance>`, port("port", 7001, true)},
		{"overriddenstatus lower case", JSON, `{` + base + `,"overriddenstatus":"DOWN"}`, override(heureka.StatusDown)},
		{"overriddenStatus camel case", JSON, `{` + base + `,"overriddenStatus":"DOWN"}`, override(heureka.StatusDown)},
		{"camel case wins over lower case", JSON, `{` + base + `,"overriddenstatus":"UP","overriddenStatus":"DOWN"}`, override(heureka.StatusDown)},
		{"overriddenstatus empty", JSON, `{` + base + `,"overriddenstatus":""}`, override(heureka.StatusUnknown)},
		{"XML overriddenStatus camel case", XML, `<instance><overriddenStatus>OUT_OF_SERVICE</overriddenStatus></instance>`, override(heureka.StatusOutOfService)},
		{"dataCenterInfo without @class", JSON, `{` + base + `,"dataCenterInfo":{"name":"Netflix"}}`, dc("Netflix")},
		{"dataCenterInfo MyDataCenterInfo", JSON, `{` + base + `,"dataCenterInfo":{"@class":"com.netflix.appinfo.MyDataCenterInfo","name":"MyOwn"}}`, dc("MyOwn")},
		{"dataCenterInfo unknown name", JSON, `{` + base + `,"dataCenterInfo":{"@class":"x","name":"orders"}}`, dc("MyOwn")},
		{"dataCenterInfo name case", JSON, `{` + base + `,"dataCenterInfo":{"name":"amazon"}}`, dc("Amazon")},
		{"dataCenterInfo Amazon from class", JSON, `{` + base + `,"dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","metadata":{"instance-id":"i-9"}}}`, both(dc("Amazon"), id("i-9"))},
		{"dataCenterInfo missing", JSON, `{` + base + `}`, dc("MyOwn")},
		{"Amazon metadata kept, id from instance-id", JSON, `{"hostName":"h","dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{"instance-id":"i-7","@class":"x"}}}`,
			both(id("i-7"), field("dc metadata", func(in *heureka.Instance) any { return in.DataCenter.Metadata.Len() }, 1))},
		{"MyOwn metadata dropped", JSON, `{` + base + `,"dataCenterInfo":{"name":"MyOwn","metadata":{"a":"b"}}}`,
			field("dc metadata", func(in *heureka.Instance) any { return in.DataCenter.Metadata.Len() == 0 }, true)},
		{"status unknown", JSON, `{` + base + `,"status":"RUNNING"}`, status(heureka.StatusUnknown)},
		{"status lower case", JSON, `{` + base + `,"status":"down"}`, status(heureka.StatusDown)},
		{"status missing", JSON, `{` + base + `}`, status(heureka.StatusUp)},
		{"XML status missing", XML, `<instance><hostName>h</hostName></instance>`, status(heureka.StatusUp)},
		{"timestamps as strings", JSON, `{` + base + `,"lastUpdatedTimestamp":"5","lastDirtyTimestamp":" 6 "}`,
			field("timestamps", func(in *heureka.Instance) any { return [2]int64{in.LastUpdatedTimestamp, in.LastDirtyTimestamp} }, [2]int64{5, 6})},
		{"timestamps as numbers", JSON, `{` + base + `,"lastUpdatedTimestamp":5,"lastDirtyTimestamp":6e0}`,
			field("timestamps", func(in *heureka.Instance) any { return [2]int64{in.LastUpdatedTimestamp, in.LastDirtyTimestamp} }, [2]int64{5, 6})},
		{"lastDirtyTimestamp missing is left for the registry", JSON, `{` + base + `}`,
			field("lastDirty", func(in *heureka.Instance) any { return in.LastDirtyTimestamp }, int64(0))},
		{"boolean as string", JSON, `{` + base + `,"isCoordinatingDiscoveryServer":"true"}`,
			field("coordinating", func(in *heureka.Instance) any { return in.IsCoordinatingDiscoveryServer }, true)},
		{"boolean as boolean", JSON, `{` + base + `,"isCoordinatingDiscoveryServer":true}`,
			field("coordinating", func(in *heureka.Instance) any { return in.IsCoordinatingDiscoveryServer }, true)},
		{"countryId as string", JSON, `{` + base + `,"countryId":"3"}`, field("countryId", func(in *heureka.Instance) any { return in.CountryID }, 3)},
		{"metadata @class dropped", JSON, `{` + base + `,"metadata":{"@class":"java.util.Collections$EmptyMap"}}`, md(map[string]string{})},
		{"metadata non-string values", JSON, `{` + base + `,"metadata":{"n":42,"f":1.5,"b":false,"s":"x","nil":null}}`, md(map[string]string{"n": "42", "f": "1.5", "b": "false", "s": "x"})},
		{"metadata null", JSON, `{` + base + `,"metadata":null}`, md(map[string]string{})},
		{"XML metadata names unescaped", XML, `<instance><metadata><a__b>1</a__b><c_-d>2</c_-d><e_f>3</e_f></metadata></instance>`, md(map[string]string{"a_b": "1", "c$d": "2", "e_f": "3"})},
		{"XML empty-map marker", XML, `<instance><metadata class="java.util.Collections$EmptyMap"/></instance>`, md(map[string]string{})},
		{"XML metadata value with attribute", XML, `<instance><metadata><k a="1">v</k></metadata></instance>`, md(map[string]string{"k": "v"})},
		{"XML metadata values keep white space", XML, `<instance><metadata><k> v </k><e/></metadata></instance>`, md(map[string]string{"k": " v ", "e": ""})},
		{"leaseInfo missing", JSON, `{` + base + `}`, lease(30, 90)},
		{"leaseInfo zeros", JSON, `{` + base + `,"leaseInfo":{"renewalIntervalInSecs":0,"durationInSecs":-5}}`, lease(30, 90)},
		{"leaseInfo only intervals taken", JSON, `{` + base + `,"leaseInfo":{"renewalIntervalInSecs":"10","durationInSecs":30,"registrationTimestamp":9,"lastRenewalTimestamp":9,"evictionTimestamp":9,"serviceUpTimestamp":9}}`, lease(10, 30)},
		{"XML empty leaseInfo", XML, `<instance><leaseInfo/></instance>`, lease(30, 90)},
		{"unknown fields ignored", JSON, `{` + base + `,"uniqueID":"u","extra":{"deep":[1,2,{}]},"port":{"$":1,"extra":true}}`, port("port", 1, true)},
		{"XML unknown elements ignored", XML, `<instance xmlns="urn:x"><extra><deep/></extra><hostName>h</hostName></instance>`, id("h")},
		{"Spring instanceId from metadata", JSON, `{` + base + `,"metadata":{"instanceId":"a:8080"}}`, id("h:a:8080")},
		{"Spring instanceId already prefixed", JSON, `{` + base + `,"metadata":{"instanceId":"h:a:8080"}}`, id("h:a:8080")},
		{"instanceId wins over metadata", JSON, `{` + base + `,"instanceId":"x","metadata":{"instanceId":"y"}}`, id("x")},
		{"sid na means none", JSON, `{` + base + `,"sid":"na"}`, field("sid", func(in *heureka.Instance) any { return in.SID }, "")},
		{"sid kept", JSON, `{` + base + `,"sid":"s1"}`, field("sid", func(in *heureka.Instance) any { return in.SID }, "s1")},
		{"app upper-cased", JSON, `{` + base + `}`, field("app", func(in *heureka.Instance) any { return in.App }, "A")},
		{"actionType canonical", JSON, `{` + base + `,"actionType":"modified"}`, field("actionType", func(in *heureka.Instance) any { return in.ActionType }, heureka.ActionModified)},
		{"actionType unknown dropped", JSON, `{` + base + `,"actionType":"RENAMED"}`, field("actionType", func(in *heureka.Instance) any { return in.ActionType }, heureka.ActionType(""))},
		{"strings from numbers", JSON, `{"hostName":12,"ipAddr":"1"}`, field("hostName", func(in *heureka.Instance) any { return in.HostName }, "12")},
		{"byte-order mark", JSON, "\xef\xbb\xbf{" + base + "}", id("h")},
		{"XML Latin-1", XML, "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><instance><hostName>caf\xe9</hostName></instance>", id("café")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := DecodeInstance([]byte(c.body), c.f)
			if err != nil {
				t.Fatal(err)
			}
			c.ok(t, in)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	deep := strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100)
	cases := []struct {
		name string
		f    Format
		body string
		want []string // substrings of the message
	}{
		{"empty", JSON, "", []string{"empty body"}},
		{"white space", XML, " \n\t", []string{"empty body"}},
		{"malformed JSON", JSON, `{"instance":{"hostName":"a",}}`, []string{"malformed JSON at byte 29", "invalid character '}'"}},
		{"truncated JSON", JSON, `{"instance":{"hostName":"a"`, []string{"malformed JSON", "ends in the middle"}},
		{"trailing data", JSON, `{"hostName":"a"} {"x":1}`, []string{"malformed JSON at byte 16", `{\"x\":1}`}},
		{"null", JSON, `null`, []string{"JSON body is null", "want an object"}},
		{"array root", JSON, `[{"hostName":"a"}]`, []string{`JSON body is [{"hostName":"a"}]`, "want an object"}},
		{"string root", JSON, `"x"`, []string{`JSON body is "x"`}},
		{"instance not an object", JSON, `{"instance":[1]}`, []string{`"instance" must be an object, got [1]`}},
		{"instance null", JSON, `{"instance":null}`, []string{`"instance" must be an object, got null`}},
		{"port array", JSON, `{"port":[1,2]}`, []string{`"port" must be a number, a string or {"$":..,"@enabled":..}, got [1,2]`}},
		{"port boolean", JSON, `{"port":true}`, []string{`"port" must be a number`, "got true"}},
		{"port text", JSON, `{"securePort":"https"}`, []string{`"securePort" must be a number`, `got "https"`}},
		{"port empty object", JSON, `{"port":{}}`, []string{`"port" must be a number`, "got {}"}},
		{"port $ object", JSON, `{"port":{"$":{"n":1}}}`, []string{`"port" must be a number`}},
		{"port too big", JSON, `{"port":1e12}`, []string{`"port" must be a number`}},
		{"@enabled object", JSON, `{"port":{"$":1,"@enabled":{}}}`, []string{`"port.@enabled" must be "true" or "false", got {}`}},
		{"hostName object", JSON, `{"hostName":{"a":1}}`, []string{`"hostName" must be a string, got {"a":1}`}},
		{"boolean object", JSON, `{"isCoordinatingDiscoveryServer":{}}`, []string{`"isCoordinatingDiscoveryServer" must be true or false, got {}`}},
		{"status array", JSON, `{"status":["UP"]}`, []string{`"status" must be a string`}},
		{"countryId text", JSON, `{"countryId":"one"}`, []string{`"countryId" must be a whole number`, `got "one"`}},
		{"countryId fraction", JSON, `{"countryId":1.5}`, []string{`"countryId" must be a whole number`, "got 1.5"}},
		{"timestamp overflow", JSON, `{"lastDirtyTimestamp":"99999999999999999999"}`, []string{`"lastDirtyTimestamp" must be a whole number of at most 64 bits`}},
		{"lease interval wrong type", JSON, `{"leaseInfo":{"durationInSecs":[30]}}`, []string{`"leaseInfo.durationInSecs" must be a whole number, got [30]`}},
		{"leaseInfo not an object", JSON, `{"leaseInfo":5}`, []string{`"leaseInfo" must be an object, got 5`}},
		{"dataCenterInfo not an object", JSON, `{"dataCenterInfo":"MyOwn"}`, []string{`"dataCenterInfo" must be an object, got "MyOwn"`}},
		{"dataCenterInfo name object", JSON, `{"dataCenterInfo":{"name":{}}}`, []string{`"dataCenterInfo.name" must be a string`}},
		{"metadata object value", JSON, `{"metadata":{"ok":"1","nested":{"a":"b"}}}`, []string{`metadata key "nested" must have a string, number or boolean value, got {"a":"b"}`}},
		{"metadata array value", JSON, `{"metadata":{"list":[1,2]}}`, []string{`metadata key "list"`, "got [1,2]"}},
		{"metadata not an object", JSON, `{"metadata":["a"]}`, []string{`"metadata" must be an object, got ["a"]`}},
		{"Amazon metadata object value", JSON, `{"dataCenterInfo":{"name":"Amazon","metadata":{"x":{}}}}`, []string{`dataCenterInfo.metadata key "x"`}},
		{"long value shortened", JSON, `{"hostName":["` + strings.Repeat("é", 100) + `"]}`, []string{`"hostName" must be a string, got ["éé`, "…"}},
		{"malformed XML", XML, `<instance><hostName>a</instance>`, []string{"malformed XML at line 1: </instance> closes <hostName>"}},
		{"XML bad entity", XML, `<instance><hostName>&bogus;</hostName></instance>`, []string{"malformed XML at line 1", "entity"}},
		{"XML truncated", XML, "<instance>\n<hostName>a", []string{"malformed XML", "ends inside <hostName>"}},
		{"XML root", XML, `<foo><hostName>a</hostName></foo>`, []string{"XML root element is <foo>, want <instance>"}},
		{"XML prefixed root", XML, `<e:instance xmlns:e="urn:e"/>`, []string{"XML root element is <e:instance>, want <instance>"}},
		{"XML two roots", XML, `<instance/><instance/>`, []string{"after the root element"}},
		{"XML text root", XML, `hello`, []string{"text \"hello\" outside the root element"}},
		{"XML comment only", XML, `<!-- nothing -->`, []string{"no root element, want <instance>"}},
		{"XML DOCTYPE", XML, `<!DOCTYPE instance [<!ENTITY x "boom">]><instance><hostName>&x;</hostName></instance>`, []string{"DOCTYPE"}},
		{"XML DOCTYPE inside", XML, `<instance><!DOCTYPE x></instance>`, []string{"DOCTYPE"}},
		{"XML billion laughs", XML, `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><instance>&lol2;</instance>`, []string{"DOCTYPE"}},
		{"XML nested too deep", XML, `<instance>` + deep + `</instance>`, []string{"nested more than 64 elements deep"}},
		{"XML port text", XML, `<instance><port enabled="true">http</port></instance>`, []string{`"port" must be a number`, `"$":"http"`}},
		{"XML repeated field", XML, `<instance><hostName>a</hostName><hostName>b</hostName></instance>`, []string{`"hostName" must be a string, got ["a","b"]`}},
		{"XML metadata key not usable", XML, `<instance><metadata><m:k xmlns:m="urn:m">v</m:k></metadata></instance>`, []string{"metadata element <m:k> is not a usable key"}},
		{"XML metadata non-ASCII key", XML, `<instance><metadata><größe>1</größe></metadata></instance>`, []string{"metadata element <größe> is not a usable key"}},
		{"XML metadata nested value", XML, `<instance><metadata><k><x>1</x></k></metadata></instance>`, []string{`metadata key "k" must have a string`}},
		{"XML encoding", XML, `<?xml version="1.0" encoding="EBCDIC"?><instance/>`, []string{"encoding EBCDIC is not supported"}},
		{"XML invalid UTF-8", XML, "<instance><hostName>\xff</hostName></instance>", []string{"malformed XML", "UTF-8"}},
		{"unknown format", Format(7), `{}`, []string{"unknown format 7"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := DecodeInstance([]byte(c.body), c.f)
			if err == nil {
				t.Fatalf("want an error, got %s", dump(in))
			}
			if code := heureka.ErrorCode(err); code != heureka.EINVALID {
				t.Errorf("code %q, want %q (%v)", code, heureka.EINVALID, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDecodeListings(t *testing.T) {
	// An old XStream-era server: one application and one instance written
	// as objects, versions__delta as a number.
	single := `{"applications":{"versions__delta":7,"apps__hashcode":"UP_1_","application":
	  {"name":"orders","instance":{"instanceId":"a","hostName":"a","app":"ORDERS","ipAddr":"1",
	   "leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90,"registrationTimestamp":11,"renewalTimestamp":12}}}}}`
	apps, err := DecodeApplications([]byte(single), JSON)
	if err != nil {
		t.Fatal(err)
	}
	if apps.VersionDelta != 7 || apps.HashCode != "UP_1_" || len(apps.Apps) != 1 || apps.Apps[0].Name != "ORDERS" || len(apps.Apps[0].Instances) != 1 {
		t.Fatalf("got %+v", apps)
	}
	if l := apps.Apps[0].Instances[0].Lease; l.RegistrationTimestamp != 11 || l.LastRenewalTimestamp != 12 {
		t.Errorf("listings keep lease timestamps (renewalTimestamp is the legacy alias): %+v", l)
	}

	xmlSingle := `<applications><versions__delta>-1</versions__delta><apps__hashcode></apps__hashcode>
	  <application><name>ORDERS</name><instance><hostName>a</hostName></instance></application></applications>`
	apps, err = DecodeApplications([]byte(xmlSingle), XML)
	if err != nil {
		t.Fatal(err)
	}
	if apps.VersionDelta != -1 || len(apps.Apps) != 1 || len(apps.Apps[0].Instances) != 1 || apps.Apps[0].Instances[0].ID != "a" {
		t.Fatalf("got %+v", apps)
	}

	for _, body := range []string{`{"applications":{"application":[]}}`, `{"application":[]}`, `<applications/>`, `<applications></applications>`} {
		f, _ := SniffFormat([]byte(body), "")
		apps, err := DecodeApplications([]byte(body), f)
		if err != nil || len(apps.Apps) != 0 {
			t.Errorf("%s: got %+v, %v", body, apps, err)
		}
	}

	app, err := DecodeApplication([]byte(`{"name":"x","instance":[]}`), JSON)
	if err != nil || app.Name != "X" || len(app.Instances) != 0 {
		t.Errorf("bare application: got %+v, %v", app, err)
	}

	for body, want := range map[string]string{
		`{"applications":{"application":[{"name":"A","instance":[{},{"port":[1]}]}]}}`: `application 0 "A", instance 1: "port" must be`,
		`{"applications":{"application":[5]}}`:                                         `"application" must be an object, got 5`,
		`{"applications":{"versions__delta":"x"}}`:                                     `"versions__delta" must be a whole number`,
		`{"application":{"name":"A","instance":"x"}}`:                                  `application "A", instance 0: "instance" must be an object`,
	} {
		var err error
		if strings.HasPrefix(body, `{"applications"`) {
			_, err = DecodeApplications([]byte(body), JSON)
		} else {
			_, err = DecodeApplication([]byte(body), JSON)
		}
		if err == nil || heureka.ErrorCode(err) != heureka.EINVALID || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want EINVALID containing %q", body, err, want)
		}
	}
}

func TestFormat(t *testing.T) {
	for accept, want := range map[string]Format{
		"": XML, "*/*": XML, "application/xml": XML, "text/xml": XML,
		"application/json": JSON, "Application/JSON; charset=utf-8": JSON, "application/xml, application/json;q=0.9": JSON,
	} {
		if got := FormatFor(accept); got != want {
			t.Errorf("FormatFor(%q) = %v, want %v", accept, got, want)
		}
	}
	if JSON.ContentType() != "application/json" || XML.ContentType() != "application/xml" {
		t.Error("content types")
	}
	for _, c := range []struct {
		body, ct string
		want     Format
		err      string
	}{
		{` {"a":1}`, "application/xml", JSON, ""},
		{"\n<instance/>", "application/json", XML, ""},
		{"\xef\xbb\xbf<instance/>", "", XML, ""},
		{"", "application/json", JSON, ""},
		{"", "Text/XML", XML, ""},
		{"", "", 0, "empty body"},
		{"hello", "text/plain", 0, `starts with "hello"`},
	} {
		got, err := SniffFormat([]byte(c.body), c.ct)
		switch {
		case c.err != "":
			if err == nil || heureka.ErrorCode(err) != heureka.EINVALID || !strings.Contains(err.Error(), c.err) {
				t.Errorf("SniffFormat(%q, %q) error = %v, want EINVALID containing %q", c.body, c.ct, err, c.err)
			}
		case err != nil || got != c.want:
			t.Errorf("SniffFormat(%q, %q) = %v, %v; want %v", c.body, c.ct, got, err, c.want)
		}
	}
}

// TestDecodedInstanceSharesNothingWithTheBody: the decoder views metadata
// keys and values, numbers and flags in the body instead of copying them
// (scalarView). None of those views may outlive the decode: an instance
// decoded from a body that is then overwritten, as a server's read buffer
// is, must be the instance decoded from an untouched copy.
func TestDecodedInstanceSharesNothingWithTheBody(t *testing.T) {
	bodies := []string{
		springBody, springNumbersBody, fargoJSONBody, jsMinimalBody, jsBooleanBody, pyBody,
		`{"instance":{"hostName":"h","app":"A","port":{"$":"8080","@enabled":"true"},` +
			`"metadata":{"plain":"v","n":15,"b":true,"esc\u0061ped":"x\ty","gone":null,"@class":"c","dup":"1","dup":"2"},` +
			`"dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{"instance-id":"i-1","zone":"z"}}}}`,
	}
	for _, in := range allTestInstances() {
		bodies = append(bodies, string(EncodeInstance(JSON, in)))
	}
	for _, body := range bodies {
		want, err := DecodeInstance([]byte(body), JSON)
		if err != nil {
			t.Fatalf("decode %.80q: %v", body, err)
		}
		b := []byte(body)
		got, err := DecodeInstance(b, JSON)
		if err != nil {
			t.Fatal(err)
		}
		for i := range b {
			b[i] = 'X'
		}
		if !sameInstance(want, got) || dump(want) != dump(got) {
			t.Errorf("overwriting the body changed the instance decoded from it\nbody: %.200q\nwant: %s\n got: %s", body, dump(want), dump(got))
		}
	}
}
