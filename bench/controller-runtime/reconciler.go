package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

const (
	finalizer    = "example.kubebus.dev/backup-bucket"
	fieldManager = "kubebus-databasecluster"
	statusWriter = "kubebus-status-writer"
)

var clusterKind = schema.GroupVersionKind{Group: "example.kubebus.dev", Version: "v1alpha1", Kind: "DatabaseCluster"}

func newCluster() *unstructured.Unstructured {
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(clusterKind)
	return cluster
}

type reconciler struct {
	client   client.Client
	buckets  *backupBuckets
	instance string
}

func (r *reconciler) setup(mgr ctrl.Manager, options controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(newCluster()).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		WithOptions(options).
		Complete(r)
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := newCluster()
	if err := r.client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.GetDeletionTimestamp().IsZero() {
		if controllerutil.ContainsFinalizer(cluster, finalizer) {
			removed, err := r.buckets.remove(ctx, string(cluster.GetUID()))
			if err != nil {
				return ctrl.Result{}, err
			}
			if removed {
				if err := r.event(ctx, cluster, "BucketRemoved", "Removed the backup bucket"); err != nil {
					return ctrl.Result{}, err
				}
			}
			return ctrl.Result{}, r.setFinalizer(ctx, cluster, []any{})
		}
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(cluster, finalizer) {
		if err := r.setFinalizer(ctx, cluster, []any{finalizer}); err != nil {
			return ctrl.Result{}, err
		}
	}
	created, err := r.buckets.ensure(ctx, string(cluster.GetUID()))
	if err != nil {
		return ctrl.Result{}, err
	}
	if created {
		if err := r.event(ctx, cluster, "BucketCreated", "Created the backup bucket"); err != nil {
			return ctrl.Result{}, err
		}
	}
	s, err := parseSpec(cluster)
	if err != nil {
		return ctrl.Result{}, r.writeStatus(ctx, cluster, map[string]any{"phase": "Failed"}, []metav1.Condition{
			{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "InvalidSpec", Message: err.Error()},
		})
	}
	// The Secret (created once, when the cache has none) and the three owned
	// objects side by side, as the example operator sends them (one Promise.all).
	if err := r.ensureOwned(ctx, cluster, s); err != nil {
		return ctrl.Result{}, err
	}
	statefulSet := &appsv1.StatefulSet{}
	readyReplicas := int64(0)
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster.GetNamespace(), Name: cluster.GetName()}, statefulSet); err == nil {
		readyReplicas = min(int64(statefulSet.Status.ReadyReplicas), s.replicas)
	}
	ready := readyReplicas >= s.replicas
	message := fmt.Sprintf("%d/%d replicas ready", readyReplicas, s.replicas)
	phase, readyReason, progressing, progressingReason := "Provisioning", "WaitingForReplicas", metav1.ConditionTrue, "Provisioning"
	if ready {
		phase, readyReason, progressing, progressingReason = "Ready", "AllReplicasReady", metav1.ConditionFalse, "Stable"
	}
	return ctrl.Result{}, r.writeStatus(ctx, cluster,
		map[string]any{"phase": phase, "readyReplicas": readyReplicas, "endpoint": endpoint(cluster, s)},
		[]metav1.Condition{
			{Type: "Progressing", Status: progressing, Reason: progressingReason, Message: message},
			{Type: "Ready", Status: conditionStatus(ready), Reason: readyReason, Message: message},
			{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected"},
		})
}

func conditionStatus(value bool) metav1.ConditionStatus {
	if value {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// ensureOwned creates the Secret unless the cache has it and applies the
// Service, ConfigMap and StatefulSet, all four side by side; the cache may not
// show a Secret created a moment ago, so AlreadyExists means it is there.
func (r *reconciler) ensureOwned(ctx context.Context, cluster *unstructured.Unstructured, s spec) error {
	secret := newCredentials(cluster, s)
	err := r.client.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
	needSecret := apierrors.IsNotFound(err)
	if err != nil && !needSecret {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	secretCreated := false
	if needSecret {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.client.Create(ctx, secret, client.FieldOwner(fieldManager))
			switch {
			case err == nil:
				secretCreated = true
			case !apierrors.IsAlreadyExists(err):
				errs[3] = err
			}
		}()
	}
	for i, object := range []*unstructured.Unstructured{
		desiredService(cluster, s), desiredConfigMap(cluster, s), desiredStatefulSet(cluster, s),
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.client.Patch(ctx, object, client.Apply, client.FieldOwner(fieldManager), client.ForceOwnership)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if secretCreated {
		return r.event(ctx, cluster, "CredentialsCreated", "Created Secret "+secret.GetName())
	}
	return nil
}

func (r *reconciler) setFinalizer(ctx context.Context, cluster *unstructured.Unstructured, finalizers []any) error {
	patch := newCluster()
	patch.SetName(cluster.GetName())
	patch.SetNamespace(cluster.GetNamespace())
	patch.SetUID(cluster.GetUID())
	patch.Object["metadata"].(map[string]any)["finalizers"] = finalizers
	return r.client.Patch(ctx, patch, client.Apply, client.FieldOwner(fieldManager+"-finalizer"), client.ForceOwnership)
}

// writeStatus applies the status unless it would change nothing.
func (r *reconciler) writeStatus(ctx context.Context, cluster *unstructured.Unstructured, status map[string]any, reports []metav1.Condition) error {
	current, _, _ := unstructured.NestedMap(cluster.Object, "status")
	var conditions []metav1.Condition
	raw, _, _ := unstructured.NestedSlice(current, "conditions")
	for _, item := range raw {
		var condition metav1.Condition
		if fields, ok := item.(map[string]any); ok &&
			runtime.DefaultUnstructuredConverter.FromUnstructured(fields, &condition) == nil {
			conditions = append(conditions, condition)
		}
	}
	before := append([]metav1.Condition(nil), conditions...)
	for _, report := range reports {
		report.ObservedGeneration = cluster.GetGeneration()
		meta.SetStatusCondition(&conditions, report)
	}
	status["observedGeneration"] = cluster.GetGeneration()
	unchanged := equality.Semantic.DeepEqual(before, conditions)
	for key, value := range status {
		unchanged = unchanged && fmt.Sprint(current[key]) == fmt.Sprint(value)
	}
	if unchanged {
		return nil
	}
	list := make([]any, 0, len(conditions))
	for _, condition := range conditions {
		item, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&condition)
		if err != nil {
			return err
		}
		list = append(list, item)
	}
	status["conditions"] = list
	patch := newCluster()
	patch.SetName(cluster.GetName())
	patch.SetNamespace(cluster.GetNamespace())
	patch.SetUID(cluster.GetUID())
	patch.Object["status"] = status
	return r.client.Status().Patch(ctx, patch, client.Apply, client.FieldOwner(statusWriter), client.ForceOwnership)
}

func (r *reconciler) event(ctx context.Context, cluster *unstructured.Unstructured, reason, note string) error {
	return r.client.Create(ctx, &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: cluster.GetName() + "." + suffix(), Namespace: cluster.GetNamespace()},
		EventTime:           metav1.NowMicro(),
		Type:                corev1.EventTypeNormal,
		Reason:              reason,
		Note:                note,
		Action:              "Reconcile",
		ReportingController: "kubebus.dev/databasecluster",
		ReportingInstance:   r.instance,
		Regarding: corev1.ObjectReference{
			APIVersion: cluster.GetAPIVersion(), Kind: cluster.GetKind(), Name: cluster.GetName(),
			Namespace: cluster.GetNamespace(), UID: cluster.GetUID(), ResourceVersion: cluster.GetResourceVersion(),
		},
	})
}
