package org.mbcache;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

/**
 * An entry of the kernel port stays 40 bytes with compressed references: a 12-byte object header
 * plus its instance fields (4 bytes a reference or int, 8 a long), rounded up to 8. The JVM packs a
 * 4-byte field into the gap before the first long, so the sum is exact for this shape. Hot mode and
 * snapshots keep their state elsewhere (the cache's hot-cell table; a mark that fills padding); a
 * new field would make every entry 48 bytes, a fifth more memory at ten million entries.
 */
class MbCacheEntryFootprintTest {

    private static final int HEADER_BYTES = 12;
    private static final int ENTRY_BYTES = 40;

    @Test
    void anEntryFitsInFortyBytesWithCompressedReferences() {
        int bytes = HEADER_BYTES;
        StringBuilder fields = new StringBuilder();
        for (Class<?> c = ListEntry.class; c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers())) {
                    continue;
                }
                Class<?> type = field.getType();
                bytes += type == long.class || type == double.class ? 8
                        : type == short.class || type == char.class ? 2
                        : type == byte.class || type == boolean.class ? 1 : 4;
                fields.append(' ').append(type.getSimpleName()).append(' ').append(field.getName());
            }
        }
        int rounded = (bytes + 7) & ~7;
        assertTrue(rounded <= ENTRY_BYTES, "ListEntry takes " + rounded + " bytes:" + fields);
    }
}
