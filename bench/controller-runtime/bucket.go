package main

// The cluster's external resource, as examples/databasecluster/backup-bucket.ts
// keeps it: a NATS object-store bucket named by the cluster's uid, asked for
// (stream info) and created when missing, remembered once seen.

import (
	"context"
	"errors"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

type backupBuckets struct {
	js   jetstream.JetStream
	seen sync.Map
}

func bucketName(uid string) string { return "kubebus-backups-" + uid }

// ensure creates the bucket unless it exists and says whether it did.
func (b *backupBuckets) ensure(ctx context.Context, uid string) (bool, error) {
	if _, ok := b.seen.Load(uid); ok {
		return false, nil
	}
	_, err := b.js.Stream(ctx, "OBJ_"+bucketName(uid))
	if err == nil {
		b.seen.Store(uid, true)
		return false, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return false, err
	}
	if _, err := b.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      bucketName(uid),
		Description: "backups of DatabaseCluster " + uid,
		Replicas:    1,
	}); err != nil {
		return false, err
	}
	b.seen.Store(uid, true)
	return true, nil
}

// remove deletes the bucket; one already gone is fine.
func (b *backupBuckets) remove(ctx context.Context, uid string) (bool, error) {
	b.seen.Delete(uid)
	err := b.js.DeleteObjectStore(ctx, bucketName(uid))
	if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return false, nil
	}
	return err == nil, err
}
