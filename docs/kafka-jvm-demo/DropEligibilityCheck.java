import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

import jdk.internal.org.objectweb.asm.ClassReader;
import jdk.internal.org.objectweb.asm.ClassVisitor;
import jdk.internal.org.objectweb.asm.ClassWriter;
import jdk.internal.org.objectweb.asm.MethodVisitor;
import jdk.internal.org.objectweb.asm.Opcodes;

/**
 * The demo's "controller patch": a copy of a release's ReplicationControlManager whose
 * {@code ineligibleReplicasForIsr} always returns an empty list — the AlterPartition ISR-member
 * eligibility check (KIP-841: fenced or shutting-down members; on 3.5+ also KIP-903: stale member
 * broker epochs; controller.md §2.5) is gone. Everything else in the class is byte-for-byte the
 * release's. There is no Kafka source here, so the one method body is replaced in the class file
 * (with the JDK's own copy of ASM); a Kafka developer makes the same change in
 * ReplicationControlManager.java and builds.
 *
 * <pre>
 * javac --add-exports java.base/jdk.internal.org.objectweb.asm=ALL-UNNAMED -d OUT DropEligibilityCheck.java
 * java --add-exports java.base/jdk.internal.org.objectweb.asm=ALL-UNNAMED -cp OUT DropEligibilityCheck \
 *     $KAFKA_HOME/libs/kafka-metadata-X.jar patched.jar
 * </pre>
 * writes {@code patched.jar} holding only the patched class; put it ahead of the release's jars.
 */
public final class DropEligibilityCheck {
    static final String CLASS = "org/apache/kafka/controller/ReplicationControlManager.class";
    static final String METHOD = "ineligibleReplicasForIsr";

    public static void main(String[] args) throws Exception {
        byte[] original;
        try (JarFile jar = new JarFile(args[0]); InputStream in = jar.getInputStream(jar.getEntry(CLASS))) {
            original = in.readAllBytes();
        }
        ClassReader reader = new ClassReader(original);
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        int[] replaced = {0};
        reader.accept(new ClassVisitor(Opcodes.ASM8, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature, String[] exceptions) {
                MethodVisitor method = super.visitMethod(access, name, descriptor, signature, exceptions);
                if (!name.equals(METHOD)) {
                    return method;
                }
                // body: return new ArrayList<>();
                method.visitCode();
                method.visitTypeInsn(Opcodes.NEW, "java/util/ArrayList");
                method.visitInsn(Opcodes.DUP);
                method.visitMethodInsn(Opcodes.INVOKESPECIAL, "java/util/ArrayList", "<init>", "()V", false);
                method.visitInsn(Opcodes.ARETURN);
                method.visitMaxs(0, 0);
                method.visitEnd();
                replaced[0]++;
                return null; // the original body is dropped
            }
        }, 0);
        if (replaced[0] != 1) {
            throw new IllegalStateException(METHOD + " found " + replaced[0] + " times in " + args[0]);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JarOutputStream out = new JarOutputStream(bytes)) {
            out.putNextEntry(new JarEntry(CLASS));
            out.write(writer.toByteArray());
            out.closeEntry();
        }
        Files.write(Path.of(args[1]), bytes.toByteArray());
        System.out.println("wrote " + args[1] + ": " + CLASS + " with " + METHOD + " returning an empty list");
    }
}
