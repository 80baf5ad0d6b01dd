/**
 * Helpers shared by the backends of the {@code org.mbcache} module (saturating arithmetic, waiting).
 * Not exported: not part of the API.
 */
package org.mbcache.internal;
