package main

// The owned objects, as examples/databasecluster/owned.ts builds them.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type engine struct {
	image, dataDir, passwordEnv string
	port                        int64
}

var engines = map[string]engine{
	"postgres": {image: "postgres", port: 5432, dataDir: "/var/lib/postgresql/data", passwordEnv: "POSTGRES_PASSWORD"},
	"mysql":    {image: "mysql", port: 3306, dataDir: "/var/lib/mysql", passwordEnv: "MYSQL_ROOT_PASSWORD"},
}

type spec struct {
	engine, version, storage, schedule string
	replicas, retentionDays            int64
}

// parseSpec reads the fields the operator uses; the CRD's schema has checked their types.
func parseSpec(cluster *unstructured.Unstructured) (spec, error) {
	s := spec{replicas: 3}
	s.engine, _, _ = unstructured.NestedString(cluster.Object, "spec", "engine")
	s.version, _, _ = unstructured.NestedString(cluster.Object, "spec", "version")
	s.storage, _, _ = unstructured.NestedString(cluster.Object, "spec", "storage", "size")
	if replicas, found, _ := unstructured.NestedInt64(cluster.Object, "spec", "replicas"); found {
		s.replicas = replicas
	}
	if schedule, found, _ := unstructured.NestedString(cluster.Object, "spec", "backup", "schedule"); found {
		s.schedule, s.retentionDays = schedule, 7
		if days, found, _ := unstructured.NestedInt64(cluster.Object, "spec", "backup", "retentionDays"); found {
			s.retentionDays = days
		}
	}
	if _, ok := engines[s.engine]; !ok {
		return s, fmt.Errorf("spec.engine: %q is not postgres or mysql", s.engine)
	}
	return s, nil
}

func labels(cluster *unstructured.Unstructured) map[string]any {
	return map[string]any{
		"app.kubernetes.io/name":       "databasecluster",
		"app.kubernetes.io/instance":   cluster.GetName(),
		"app.kubernetes.io/managed-by": "kubebus",
	}
}

func ownedObject(cluster *unstructured.Unstructured, apiVersion, kind, name string, body map[string]any) *unstructured.Unstructured {
	body["apiVersion"], body["kind"] = apiVersion, kind
	body["metadata"] = map[string]any{
		"name":      name,
		"namespace": cluster.GetNamespace(),
		"labels":    labels(cluster),
		"ownerReferences": []any{map[string]any{
			"apiVersion": cluster.GetAPIVersion(), "kind": cluster.GetKind(), "name": cluster.GetName(),
			"uid": string(cluster.GetUID()), "controller": true, "blockOwnerDeletion": true,
		}},
	}
	return &unstructured.Unstructured{Object: body}
}

func endpoint(cluster *unstructured.Unstructured, s spec) string {
	return fmt.Sprintf("%s.%s.svc:%d", cluster.GetName(), cluster.GetNamespace(), engines[s.engine].port)
}

func desiredService(cluster *unstructured.Unstructured, s spec) *unstructured.Unstructured {
	return ownedObject(cluster, "v1", "Service", cluster.GetName(), map[string]any{
		"spec": map[string]any{
			"clusterIP": "None",
			"selector":  labels(cluster),
			"ports":     []any{map[string]any{"name": s.engine, "port": engines[s.engine].port}},
		},
	})
}

func desiredConfigMap(cluster *unstructured.Unstructured, s spec) *unstructured.Unstructured {
	key, config := "postgresql.conf", fmt.Sprintf("max_connections = %d\nwal_level = replica\n", 50*s.replicas)
	if s.engine == "mysql" {
		key, config = "my.cnf", fmt.Sprintf("[mysqld]\nmax_connections=%d\nbinlog_format=ROW\n", 50*s.replicas)
	}
	return ownedObject(cluster, "v1", "ConfigMap", cluster.GetName()+"-config", map[string]any{
		"data": map[string]any{
			key:                     config,
			"backup-schedule":       s.schedule,
			"backup-retention-days": fmt.Sprint(s.retentionDays),
		},
	})
}

func desiredStatefulSet(cluster *unstructured.Unstructured, s spec) *unstructured.Unstructured {
	e := engines[s.engine]
	return ownedObject(cluster, "apps/v1", "StatefulSet", cluster.GetName(), map[string]any{
		"spec": map[string]any{
			"serviceName": cluster.GetName(),
			"replicas":    s.replicas,
			"selector":    map[string]any{"matchLabels": labels(cluster)},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels(cluster)},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name":  s.engine,
					"image": e.image + ":" + s.version,
					"ports": []any{map[string]any{"name": s.engine, "containerPort": e.port}},
					"env": []any{map[string]any{
						"name": e.passwordEnv,
						"valueFrom": map[string]any{"secretKeyRef": map[string]any{
							"name": cluster.GetName() + "-credentials", "key": "password",
						}},
					}},
					"volumeMounts": []any{map[string]any{"name": "data", "mountPath": e.dataDir}},
				}}},
			},
			"volumeClaimTemplates": []any{map[string]any{
				"metadata": map[string]any{"name": "data"},
				"spec": map[string]any{
					"accessModes": []any{"ReadWriteOnce"},
					"resources":   map[string]any{"requests": map[string]any{"storage": s.storage}},
				},
			}},
		},
	})
}

func newCredentials(cluster *unstructured.Unstructured, s spec) *unstructured.Unstructured {
	username := "root"
	if s.engine == "postgres" {
		username = "postgres"
	}
	return ownedObject(cluster, "v1", "Secret", cluster.GetName()+"-credentials", map[string]any{
		"type":       "Opaque",
		"stringData": map[string]any{"username": username, "password": password()},
	})
}
