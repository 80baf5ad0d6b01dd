package org.mbcache.bench;

import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The line in which a child JVM prints a result record and the report reads it back: a tag, then
 * the record's fields. A list of {@link Field}s is the one place that names the fields, their
 * order and how each is written; {@link #line} writes them from the record's accessors and
 * {@link #parse} reads each back by its name, converts it to its component's type and calls the
 * record's canonical constructor.
 *
 * <p>Two layouts: {@link #named} writes {@code TAG name=value ...}, every component in the
 * record's order; {@link #positional} writes {@code TAG value ...}, where a value's place in the
 * list of fields names it and the last field takes the rest of the line.
 *
 * @param <R> the result record
 */
final class ResultLine<R extends Record> {
    /**
     * One field of a line.
     *
     * @param name the record component it holds
     * @param write how its value is written
     */
    record Field(String name, Function<Object, String> write) {
        /** A field written as {@link String#valueOf(Object)} writes its value. */
        static Field of(String name) {
            return new Field(name, String::valueOf);
        }

        /** A field written with a {@link java.util.Formatter} pattern, in {@link Locale#ROOT}. */
        static Field of(String name, String format) {
            return new Field(name, value -> String.format(Locale.ROOT, format, value));
        }
    }

    private final String tag;
    private final boolean named;
    private final List<Field> fields;
    private final RecordComponent[] components;
    private final Map<String, RecordComponent> byName;
    private final Constructor<R> constructor;

    private ResultLine(Class<R> type, String tag, boolean named, List<Field> fields) {
        this.tag = tag;
        this.named = named;
        this.fields = fields;
        this.components = type.getRecordComponents();
        this.byName = Arrays.stream(components).collect(Collectors.toMap(RecordComponent::getName, c -> c));
        Set<String> names = fields.stream().map(Field::name).collect(Collectors.toSet());
        if (names.size() != fields.size() || !names.equals(byName.keySet())) {
            throw new IllegalArgumentException(tag + " fields " + names + " are not " + type + "'s components " + byName.keySet());
        }
        try {
            this.constructor = type.getDeclaredConstructor(
                    Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new));
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("a record without its canonical constructor: " + type, e);
        }
    }

    /** {@code TAG name=value ...}: every component of the record, in its order, written as {@code String.valueOf}. */
    static <R extends Record> ResultLine<R> named(Class<R> type, String tag) {
        return new ResultLine<>(type, tag, true,
                Arrays.stream(type.getRecordComponents()).map(c -> Field.of(c.getName())).toList());
    }

    /** {@code TAG value ...}: these fields, which name every component of the record once, in this order. */
    static <R extends Record> ResultLine<R> positional(Class<R> type, String tag, Field... fields) {
        return new ResultLine<>(type, tag, false, List.of(fields));
    }

    /** The line of a result. */
    String line(R result) {
        StringBuilder b = new StringBuilder(tag);
        for (Field f : fields) {
            b.append(' ').append(named ? f.name() + "=" : "").append(f.write().apply(value(result, byName.get(f.name()))));
        }
        return b.toString();
    }

    /**
     * Reads back a {@link #line}.
     *
     * @throws IllegalArgumentException if the line has another tag, lacks a field or has one that
     *     does not read as its component's type
     */
    R parse(String line) {
        String text = line.strip();
        if (!text.startsWith(tag + " ")) {
            throw new IllegalArgumentException("not a " + tag + " line: " + line);
        }
        String fieldsText = text.substring(tag.length() + 1);
        Map<String, String> texts = named ? textsByName(fieldsText) : textsByPlace(fieldsText);
        Object[] values = new Object[components.length];
        for (int i = 0; i < components.length; i++) {
            String value = texts.get(components[i].getName());
            if (value == null) {
                throw new IllegalArgumentException(tag + " line without " + components[i].getName() + ": " + line);
            }
            try {
                values[i] = valueOf(components[i].getType(), value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad " + tag + " line: " + line, e);
            }
        }
        try {
            return constructor.newInstance(values);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("a record's canonical constructor failed", e);
        }
    }

    /** The texts of {@code name=value} fields, by name. */
    private static Map<String, String> textsByName(String fieldsText) {
        Map<String, String> texts = new HashMap<>();
        for (String kv : fieldsText.strip().split(" +")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                texts.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return texts;
    }

    /** The texts of the fields, named by their places; the last takes the rest of the line. */
    private Map<String, String> textsByPlace(String fieldsText) {
        String[] values = fieldsText.split(" ", fields.size());
        Map<String, String> texts = new HashMap<>();
        for (int i = 0; i < values.length; i++) {
            texts.put(fields.get(i).name(), values[i]);
        }
        return texts;
    }

    /** A component's value, by its accessor. */
    private static Object value(Record result, RecordComponent component) {
        try {
            return component.getAccessor().invoke(result);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("a record's public accessor failed: " + component, e);
        }
    }

    /** A field's text as a value of its component's type. */
    private static Object valueOf(Class<?> type, String text) {
        if (type == String.class) {
            return text;
        }
        if (type == int.class) {
            return Integer.parseInt(text);
        }
        if (type == long.class) {
            return Long.parseLong(text);
        }
        if (type == double.class) {
            return Double.parseDouble(text);
        }
        throw new IllegalStateException("no reader for a result field of " + type);
    }
}
