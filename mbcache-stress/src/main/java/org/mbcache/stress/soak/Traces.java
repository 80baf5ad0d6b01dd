package org.mbcache.stress.soak;

/**
 * The stacks in the soak's failure descriptions: of a throwable that should not have come out of a
 * call, and of a thread that is stuck. Both show the top {@value #FRAMES} frames, one per line.
 */
final class Traces {

    /** Frames shown of each stack. */
    static final int FRAMES = 12;

    private Traces() {
    }

    /**
     * A throwable and the top of its stack.
     *
     * @param t the throwable
     * @return its {@code toString()} and its first frames, each on an indented line
     */
    static String of(Throwable t) {
        return frames(new StringBuilder(String.valueOf(t)), t.getStackTrace());
    }

    /**
     * A thread's name and state, and the top of its stack, on lines of their own.
     *
     * @param thread the thread, stuck where the soak waited for it
     * @return the description, starting with a line break
     */
    static String of(Thread thread) {
        StringBuilder sb = new StringBuilder("\n    ").append(thread.getName()).append(" (").append(thread.getState()).append(')');
        return frames(sb, thread.getStackTrace());
    }

    private static String frames(StringBuilder sb, StackTraceElement[] frames) {
        for (int i = 0; i < Math.min(FRAMES, frames.length); i++) {
            sb.append("\n      at ").append(frames[i]);
        }
        return sb.toString();
    }
}
