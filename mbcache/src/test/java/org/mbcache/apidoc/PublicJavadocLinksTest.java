package org.mbcache.apidoc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.source.doctree.DocCommentTree;
import com.sun.source.doctree.ReferenceTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.DocTreePath;
import com.sun.source.util.DocTreePathScanner;
import com.sun.source.util.DocTrees;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.PackageElement;
import javax.lang.model.util.Elements;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The published Javadoc links only what it publishes. The javadoc tool renders a {@code @link} to a
 * package-private type or member as plain text without a word of warning, doclint included, so a
 * reader of the API pages meets names they cannot look up. This test parses the library's sources
 * with javac's tree API and reports every {@code @link}, {@code @linkplain}, {@code @see} and
 * {@code @throws} reference in the comment of a published element (public or protected, in an
 * exported package, all enclosing types published) that resolves to an element of this library that
 * is not published. Implementation notes belong in ordinary comments, where such links are fine.
 */
class PublicJavadocLinksTest {

    private static final Set<String> EXPORTED = Set.of("org.mbcache", "org.mbcache.caffeine", "org.mbcache.micrometer");

    @Test
    void publishedJavadocLinksOnlyPublishedElements() throws IOException {
        Map<String, Long> found = unpublishedLinks(Path.of("src", "main", "java"));
        assertEquals(Set.of(), found.keySet(), () -> "links from published Javadoc to unpublished elements:\n"
                + found.entrySet().stream()
                        .map(link -> link.getKey().replaceFirst(": ", ":" + link.getValue() + ": "))
                        .collect(Collectors.joining("\n")));
    }

    /** Each offending link as "file: reference (in the Javadoc of element)", with its line. */
    private static Map<String, Long> unpublishedLinks(Path sourceRoot) throws IOException {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(sourceRoot)) {
            sources = files.filter(file -> file.toString().endsWith(".java"))
                    .filter(file -> !file.getFileName().toString().equals("module-info.java"))
                    .sorted()
                    .collect(Collectors.toList());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8);
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        JavacTask task = (JavacTask) javac.getTask(null, files, null,
                List.of("-proc:none", "-classpath", classPath), null, files.getJavaFileObjectsFromPaths(sources));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        DocTrees trees = DocTrees.instance(task);
        Elements elements = task.getElements();

        Map<String, Long> found = new TreeMap<>();
        for (CompilationUnitTree unit : units) {
            new TreePathScanner<Void, Void>() {
                @Override
                public Void visitClass(ClassTree tree, Void unused) {
                    check(getCurrentPath());
                    return super.visitClass(tree, unused);
                }

                @Override
                public Void visitMethod(MethodTree tree, Void unused) {
                    check(getCurrentPath());
                    return null; // no published comments inside a method body
                }

                @Override
                public Void visitVariable(VariableTree tree, Void unused) {
                    check(getCurrentPath());
                    return null;
                }

                private void check(TreePath path) {
                    Element element = trees.getElement(path);
                    DocCommentTree comment = trees.getDocCommentTree(path);
                    if (element == null || comment == null || !isPublished(element, elements)) {
                        return;
                    }
                    new DocTreePathScanner<Void, Void>() {
                        @Override
                        public Void visitReference(ReferenceTree reference, Void unused) {
                            Element target = trees.getElement(getCurrentPath());
                            if (target != null && isOurs(target, elements) && !isPublished(target, elements)) {
                                long line = unit.getLineMap().getLineNumber(trees.getSourcePositions()
                                        .getStartPosition(unit, comment, reference));
                                found.put(sourceRoot.toAbsolutePath().relativize(Path.of(unit.getSourceFile().toUri()))
                                        + ": " + reference.getSignature() + " (in the Javadoc of "
                                        + element.getSimpleName() + ")", line);
                            }
                            return null;
                        }
                    }.scan(new DocTreePath(path, comment), null);
                }
            }.scan(unit, null);
        }
        return found;
    }

    private static boolean isOurs(Element element, Elements elements) {
        PackageElement pkg = elements.getPackageOf(element);
        return pkg != null && pkg.getQualifiedName().toString().startsWith("org.mbcache");
    }

    /** Whether the javadoc run of this build documents {@code element}. */
    private static boolean isPublished(Element element, Elements elements) {
        if (element.getKind() == ElementKind.PACKAGE) {
            return EXPORTED.contains(((PackageElement) element).getQualifiedName().toString());
        }
        if (element.getKind() == ElementKind.PARAMETER || element.getKind() == ElementKind.TYPE_PARAMETER) {
            return true;
        }
        for (Element at = element; at.getKind() != ElementKind.PACKAGE; at = at.getEnclosingElement()) {
            Set<Modifier> modifiers = at.getModifiers();
            boolean visible = modifiers.contains(Modifier.PUBLIC) || modifiers.contains(Modifier.PROTECTED)
                    || at.getEnclosingElement().getKind() == ElementKind.INTERFACE
                    || at.getKind() == ElementKind.ENUM_CONSTANT;
            if (!visible) {
                return false;
            }
        }
        return EXPORTED.contains(elements.getPackageOf(element).getQualifiedName().toString());
    }
}
