package eureka

import (
	"testing"

	"github.com/heureka-project/heureka"
)

// asXMLCarriesIt is what an XML round trip of x gives: metadata keys that
// cannot be element names are not written.
func asXMLCarriesIt(f Format, x *heureka.Instance) *heureka.Instance {
	if f == XML {
		return withoutNonXMLKeys(x)
	}
	return x
}

func TestRoundTripInstance(t *testing.T) {
	for _, x := range allTestInstances() {
		for _, f := range []Format{JSON, XML} {
			t.Run(f.String()+"/"+x.ID, func(t *testing.T) {
				want := withoutLeaseTimes(asXMLCarriesIt(f, x))
				got, err := DecodeInstance(EncodeInstance(f, x), f)
				if err != nil {
					t.Fatal(err)
				}
				assertSameInstance(t, got, want)

				got, err = DecodeInstance(AppendInstance(nil, f, x), f)
				if err != nil {
					t.Fatal(err)
				}
				assertSameInstance(t, got, want)

				got, err = DecodeServerInstance(EncodeInstance(f, x), f)
				if err != nil {
					t.Fatal(err)
				}
				assertSameInstance(t, got, asXMLCarriesIt(f, x))
			})
		}
	}
}

func TestRoundTripListings(t *testing.T) {
	for _, f := range []Format{JSON, XML} {
		t.Run(f.String(), func(t *testing.T) {
			apps := testApplications()
			got, err := DecodeApplications(EncodeApplications(f, apps), f)
			if err != nil {
				t.Fatal(err)
			}
			if got.VersionDelta != apps.VersionDelta || got.HashCode != apps.HashCode || len(got.Apps) != len(apps.Apps) {
				t.Fatalf("got %+v, want %+v", got, apps)
			}
			for i, a := range apps.Apps {
				assertSameApplication(t, f, got.Apps[i], a)
			}

			one, err := DecodeApplication(EncodeApplication(f, apps.Apps[1]), f)
			if err != nil {
				t.Fatal(err)
			}
			assertSameApplication(t, f, one, apps.Apps[1])
		})
	}
}

func assertSameApplication(t *testing.T, f Format, got, want *heureka.Application) {
	t.Helper()
	if got.Name != want.Name || len(got.Instances) != len(want.Instances) {
		t.Fatalf("application %q with %d instances, want %q with %d", got.Name, len(got.Instances), want.Name, len(want.Instances))
	}
	for i, in := range want.Instances {
		assertSameInstance(t, got.Instances[i], asXMLCarriesIt(f, in))
	}
}

// JSON and XML carry the same instance: decoding either gives the same value.
func TestFormatsAgree(t *testing.T) {
	for _, x := range allTestInstances() {
		x = withoutNonXMLKeys(x)
		j, err := DecodeInstance(EncodeInstance(JSON, x), JSON)
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeInstance(EncodeInstance(XML, x), XML)
		if err != nil {
			t.Fatal(err)
		}
		assertSameInstance(t, m, j)
	}
}
