package main

// How long each apiserver request takes as this operator sees it, under
// client-go's metric name: controller-runtime no longer registers it, and the
// bench compares it with kubebus' own and with the apiserver's handler time
// (bench/request-times.ts). Timed from the transport's call to the body's
// close, as kubebus times a request to its body's end; a watch, whose body
// lasts minutes, to its response headers, as kubebus times its streams.

import (
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var requestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "rest_client_request_duration_seconds",
	Help:    "Request latency in seconds, from the transport's call to the response body's close, by verb.",
	Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
}, []string{"verb"})

func init() {
	metrics.Registry.MustRegister(requestSeconds)
}

type timedTransport struct{ next http.RoundTripper }

func (t timedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	started := time.Now()
	observer := requestSeconds.WithLabelValues(req.Method)
	res, err := t.next.RoundTrip(req)
	if err != nil || res.Body == nil || isWatch(req) {
		observer.Observe(time.Since(started).Seconds())
		return res, err
	}
	res.Body = &timedBody{ReadCloser: res.Body, done: func() { observer.Observe(time.Since(started).Seconds()) }}
	return res, nil
}

// timedBody observes once, when the body is closed (client-go reads it whole, then closes it).
type timedBody struct {
	io.ReadCloser
	done func()
	seen bool
}

func (b *timedBody) Close() error {
	if !b.seen {
		b.seen = true
		b.done()
	}
	return b.ReadCloser.Close()
}

func isWatch(req *http.Request) bool {
	watch := req.URL.Query().Get("watch")
	return watch == "true" || watch == "1"
}
