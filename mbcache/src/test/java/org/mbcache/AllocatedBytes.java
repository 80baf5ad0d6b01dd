package org.mbcache;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;

/**
 * The JVM's exact count of bytes a thread has allocated, for tests that promise "allocates nothing":
 * HotSpot's {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes(long)}, called
 * reflectively, because the module {@code org.mbcache} (which these tests are compiled into) does not
 * read {@code jdk.management}, and core reflection needs no readability.
 */
public final class AllocatedBytes {

    private AllocatedBytes() {}

    /**
     * Bytes allocated so far by the calling thread.
     *
     * @return the thread's allocation counter
     */
    public static long byCurrentThread() {
        try {
            Method method = Class.forName("com.sun.management.ThreadMXBean")
                    .getMethod("getThreadAllocatedBytes", long.class);
            return (long) method.invoke(ManagementFactory.getThreadMXBean(), Thread.currentThread().getId());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("this JVM cannot count allocated bytes", e);
        }
    }
}
