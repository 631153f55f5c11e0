package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/client"
)

func TestByHostAsksTheServersLookup(t *testing.T) {
	s := startServer(t)
	s.register(t, "HDFS-DATANODE.C", "dn1", heureka.StatusUp)
	s.register(t, "HDFS-DATANODE.C", "dn2", heureka.StatusUp)
	s.register(t, "OTHER", "o1", heureka.StatusUp)
	c := newClient(t, s.URL)

	got, err := c.ByHost(context.Background(), []string{"DN2.example", "nobody.example", "dn1.example"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range got {
		ids = append(ids, in.ID)
	}
	if want := []string{"dn2", "dn1"}; !slices.Equal(ids, want) {
		t.Errorf("ByHost = %v, want %v", ids, want)
	}
	// Every instance shares 10.0.0.1; app= narrows the answer.
	got, err = c.ByHost(context.Background(), []string{"10.0.0.1"}, "other")
	if err != nil || len(got) != 1 || got[0].ID != "o1" {
		t.Errorf("ByHost(10.0.0.1, other) = %v, %v; want o1 only", got, err)
	}
	// One request a call, and no listing fetched.
	reqs := s.requests()
	if reqs["GET /v1/instances"] != 1 || reqs["GET /v1/instances?app=OTHER"] != 1 || s.fulls.Load() != 0 {
		t.Errorf("requests = %v, fulls %d; want one lookup per call and no full fetch", reqs, s.fulls.Load())
	}
}

func TestByHostOnPlainEurekaIsNotRegistered(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler()) // a server without /v1
	t.Cleanup(hs.Close)
	c := newClient(t, hs.URL+"/eureka")
	_, err := c.ByHost(context.Background(), []string{"h"}, "")
	if !errors.Is(err, client.ErrNotRegistered) {
		t.Fatalf("ByHost on a server without the lookup: %v, want ErrNotRegistered", err)
	}
}
