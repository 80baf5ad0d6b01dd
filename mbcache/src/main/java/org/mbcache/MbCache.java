package org.mbcache;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/** The kernel port (work in progress: being written now). */
public final class MbCache implements DedupCache {
    public static MbCache create(int bucketBits) { return builder().bucketBits(bucketBits).build(); }
    public static Builder builder() { return new Builder(); }
    public static final class Builder {
        public Builder bucketBits(int bucketBits) { return this; }
        public Builder maxEntries(long maxEntries) { return this; }
        public Builder executor(Executor executor) { return this; }
        public Builder createStrategy(CreateStrategy strategy) { return this; }
        public MbCache build() { return new MbCache(); }
    }
    @Override public boolean create(int key, long value, boolean reusable) { throw new UnsupportedOperationException(); }
    @Override public CacheEntry findFirst(int key) { throw new UnsupportedOperationException(); }
    @Override public CacheEntry findNext(CacheEntry entry) { throw new UnsupportedOperationException(); }
    @Override public CacheEntry get(int key, long value) { throw new UnsupportedOperationException(); }
    @Override public CacheEntry deleteOrGet(int key, long value) { throw new UnsupportedOperationException(); }
    @Override public void waitUnused(CacheEntry entry) { throw new UnsupportedOperationException(); }
    @Override public boolean waitUnused(CacheEntry entry, long timeout, TimeUnit unit) { throw new UnsupportedOperationException(); }
    @Override public void touch(CacheEntry entry) { throw new UnsupportedOperationException(); }
    @Override public void release(CacheEntry entry) { throw new UnsupportedOperationException(); }
    @Override public long size() { throw new UnsupportedOperationException(); }
    @Override public long shrink(long nrToScan) { throw new UnsupportedOperationException(); }
    @Override public CacheStats stats() { throw new UnsupportedOperationException(); }
    @Override public void close() { }
}
