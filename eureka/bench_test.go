package eureka

import (
	"fmt"
	"testing"

	"github.com/heureka-project/heureka"
)

// registry10k is 10,000 instances in 100 applications, each instance with
// five metadata entries, the size of a large HDFS deployment's registry.
func registry10k() *heureka.Applications {
	apps := make([]*heureka.Application, 100)
	for a := range apps {
		app := &heureka.Application{Name: fmt.Sprintf("HDFS-DATANODE.C%02d", a)}
		for i := range 100 {
			in := startingInstance()
			in.App = app.Name
			in.HostName = fmt.Sprintf("dn%d.rack%d.c%02d.example.com", i, i%8, a)
			in.IPAddr = fmt.Sprintf("10.%d.%d.%d", a, i/250, i%250)
			in.ID = in.HostName + ":hdfs-datanode:9866"
			in.Status = heureka.StatusUp
			in.Metadata = heureka.MetadataOf(map[string]string{
				"rack": fmt.Sprintf("/dc1/rack%d", i%8), "disk_used": "0.42", "capacity": "12000138625024",
				"management.port": "9864", "version": "3.3.6",
			})
			app.Instances = append(app.Instances, in)
		}
		apps[a] = app
	}
	return &heureka.Applications{VersionDelta: 1, HashCode: heureka.ReconcileHashCode(apps), Apps: apps}
}

func BenchmarkEncodeApplications10k(b *testing.B) {
	apps := registry10k()
	for _, f := range []Format{JSON, XML} {
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = len(EncodeApplications(f, apps))
			}
			b.SetBytes(int64(n))
		})
	}
}

func BenchmarkDecodeInstanceJSON(b *testing.B) {
	body := []byte(springBody)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeInstance(body, JSON); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeInstanceXML(b *testing.B) {
	body := EncodeInstance(XML, myOwnInstance())
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeInstance(body, XML); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeApplications10kJSON(b *testing.B) {
	body := EncodeApplications(JSON, registry10k())
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeApplications(body, JSON); err != nil {
			b.Fatal(err)
		}
	}
}
