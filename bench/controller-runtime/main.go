// The DatabaseCluster operator written the way a Go operator author writes it
// with controller-runtime: cached reads, one controller owning the StatefulSet,
// Service, ConfigMap and Secret, server-side apply of the owned objects and of
// the status. It makes the same writes, with the same bodies and field
// managers, as the example operator on kubebus (examples/databasecluster), and
// keeps the same external resource (a NATS object-store bucket per cluster), so
// the bench compares runtimes, not operators.
//
//	KUBECONFIG=… BENCH_NATS_URL=nats://… BENCH_WORKERS=8 BENCH_QPS=200 [BENCH_METRICS_ADDR=127.0.0.1:port] ./databasecluster-cr
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/go-logr/logr/funcr"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "databasecluster-cr: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	// controller-runtime's own log (reconcile errors among it) to stderr
	ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	workers := envInt("BENCH_WORKERS", 8)
	qps := envInt("BENCH_QPS", 200)
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	// qps 0 means no client-side limit, as --qps 0 does for kubebus
	if qps > 0 {
		cfg.QPS, cfg.Burst = float32(qps), qps*2
	} else {
		cfg.QPS, cfg.Burst = -1, 0
	}
	// Count the connections the clients open, as kubebus counts its own.
	var connections atomic.Int64
	dialer := &net.Dialer{}
	cfg.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		connections.Add(1)
		return dialer.DialContext(ctx, network, address)
	}
	// every request timed as the bench compares it (request_times.go)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return timedTransport{next: next} })
	usr2 := make(chan os.Signal, 1)
	signal.Notify(usr2, syscall.SIGUSR2)
	go func() {
		for range usr2 {
			fmt.Printf("kubebus_rest_client_connections_total{client=\"controller-runtime\"} %d\n", connections.Load())
		}
	}()

	mgr, err := ctrl.NewManager(cfg, manager.Options{
		// reads of the DatabaseCluster (unstructured here, a generated type in a
		// kubebuilder project) come from the cache, as typed reads do
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		// the bench reads controller_runtime_reconcile_total here (reconciles per object)
		Metrics:                metricsserver.Options{BindAddress: metricsAddress()},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	nc, err := nats.Connect(os.Getenv("BENCH_NATS_URL"))
	if err != nil {
		return fmt.Errorf("NATS (BENCH_NATS_URL): %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	r := &reconciler{client: mgr.GetClient(), buckets: &backupBuckets{js: js}, instance: "controller-runtime"}
	if err := r.setup(mgr, controller.Options{MaxConcurrentReconciles: workers}); err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	// runnables start once the caches have synced
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			fmt.Println("ready")
		}
		<-ctx.Done()
		return nil
	})); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// metricsAddress is BENCH_METRICS_ADDR (host:port), or "0": no metrics server.
func metricsAddress() string {
	if address := os.Getenv("BENCH_METRICS_ADDR"); address != "" {
		return address
	}
	return "0"
}

func envInt(name string, fallback int) int {
	if value, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return value
	}
	return fallback
}

// suffix names an Event as client-go's recorder does: the object's name, a dot, a unique part.
func suffix() string {
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)
}

func password() string {
	buf := make([]byte, 24)
	_, _ = rand.Read(buf)
	return base64.RawURLEncoding.EncodeToString(buf)
}
