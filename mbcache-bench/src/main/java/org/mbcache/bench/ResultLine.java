package org.mbcache.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The line in which a child JVM prints a result record and the parent reads it back: a tag, a
 * space, then the record as one line of JSON, written and read by Jackson. The record's header is
 * the one place that names the fields; a line that lacks a field, has one the record does not
 * know, or has one that does not read as its component's type is rejected.
 *
 * @param <R> the result record
 */
final class ResultLine<R extends Record> {
    /** Strict about what a line holds: every component present, nothing else. */
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_CREATOR_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private final Class<R> type;
    private final String tag;

    private ResultLine(Class<R> type, String tag) {
        this.type = type;
        this.tag = tag;
    }

    /** The lines of records of {@code type}, each starting with {@code tag}. */
    static <R extends Record> ResultLine<R> of(Class<R> type, String tag) {
        return new ResultLine<>(type, tag);
    }

    /** The line of a result: {@code TAG {"component":value,...}}. */
    String line(R result) {
        try {
            return tag + " " + JSON.writeValueAsString(result);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a result record that Jackson cannot write: " + result, e);
        }
    }

    /**
     * Reads back a {@link #line}.
     *
     * @throws IllegalArgumentException if the line has another tag, lacks a field, has an unknown
     *     one or has one that does not read as its component's type
     */
    R parse(String line) {
        String text = line.strip();
        if (!text.startsWith(tag + " ")) {
            throw new IllegalArgumentException("not a " + tag + " line: " + line);
        }
        try {
            return JSON.readValue(text.substring(tag.length() + 1), type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("bad " + tag + " line: " + line + " (" + e.getOriginalMessage() + ")", e);
        }
    }
}
