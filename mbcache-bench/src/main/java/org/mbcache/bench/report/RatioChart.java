package org.mbcache.bench.report;

import java.util.List;
import java.util.Locale;
import org.mbcache.bench.Backends;
import org.mbcache.bench.report.JmhResults.Row;

/**
 * A hand-written SVG bar chart of each row's speed-up over {@code caffeine} (caffeine's ns/op
 * divided by the row's), one bar per non-caffeine row that has a caffeine row in its group, with
 * reference lines at 1x (caffeine) and 1.5x (the project's target for mbcache).
 */
public final class RatioChart {
    static final int LABEL_W = 420;
    static final int PLOT_W = 460;
    static final int BAR_H = 14;
    static final int GAP = 4;
    static final int TOP = 40;

    private RatioChart() {}

    public static String svg(ResultTable table, String title) {
        double lo = 0.5;
        double hi = 2.0;
        int n = 0;
        for (List<Row> g : table.groups()) {
            for (Row r : g) {
                double s = ResultTable.speedup(g, r);
                if (!r.backend().equals(Backends.CAFFEINE) && Double.isFinite(s) && s > 0) {
                    lo = Math.min(lo, s);
                    hi = Math.max(hi, s);
                    n++;
                }
            }
        }
        // log scale, whole powers of two at the ends
        double logLo = Math.floor(Math.log(lo) / Math.log(2));
        double logHi = Math.ceil(Math.log(hi) / Math.log(2));
        Scale x = new Scale(logLo, logHi);
        int height = TOP + n * (BAR_H + GAP) + 30;
        int width = LABEL_W + PLOT_W + 80;
        StringBuilder bars = new StringBuilder();
        int y = TOP;
        for (List<Row> g : table.groups()) {
            for (Row r : g) {
                double s = ResultTable.speedup(g, r);
                if (r.backend().equals(Backends.CAFFEINE) || !Double.isFinite(s) || s <= 0) {
                    continue;
                }
                String label = r.benchmark() + " t=" + r.threads()
                        + (r.otherParams().isEmpty() ? "" : " " + r.otherParams()) + " " + r.backend();
                double x0 = Math.min(x.at(1.0), x.at(s));
                double w = Math.abs(x.at(s) - x.at(1.0));
                bars.append(String.format(Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>"
                                + "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
                                + "<text x=\"%.1f\" y=\"%d\">%.2f×</text>\n",
                        LABEL_W - 6, y + BAR_H - 3, escape(label),
                        x0, y, Math.max(w, 0.5), BAR_H, color(r.backend()),
                        Math.max(x.at(1.0), x.at(s)) + 4, y + BAR_H - 3, s));
                y += BAR_H + GAP;
            }
        }
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        + "font-family=\"sans-serif\" font-size=\"11\">\n", width, height));
        b.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height));
        b.append(String.format(Locale.ROOT, "<text x=\"10\" y=\"18\" font-size=\"14\">%s</text>\n", escape(title)));
        b.append(bars);
        for (double ref : new double[] {1.0, 1.5}) {
            double rx = x.at(ref);
            b.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>"
                            + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>\n",
                    rx, TOP - 6, rx, y, ref == 1.0 ? "black" : "red",
                    rx, TOP - 10, ref == 1.0 ? "end" : "start", ref == 1.0 ? "caffeine 1× " : " target 1.5×"));
        }
        b.append(String.format(Locale.ROOT,
                "<text x=\"10\" y=\"%d\">speed-up over caffeine = caffeine ns/op ÷ backend ns/op, log scale "
                        + "%s× to %s× (right of 1× is faster)</text>\n",
                y + 20, fmtPow(logLo), fmtPow(logHi)));
        b.append("</svg>\n");
        return b.toString();
    }

    /** Log-2 position of a ratio in the plot area. */
    private record Scale(double logLo, double logHi) {
        double at(double ratio) {
            double l = Math.log(ratio) / Math.log(2);
            return LABEL_W + (l - logLo) / (logHi - logLo) * PLOT_W;
        }
    }

    static String fmtPow(double log2) {
        double v = Math.pow(2, log2);
        return v >= 1 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.3g", v);
    }

    static String color(String backend) {
        switch (backend) {
            case Backends.MBCACHE: return "#2b6cb0";
            case Backends.MBCACHE_ALLOCFIRST: return "#63b3ed";
            case Backends.CAFFEINE_RAW: return "#dd6b20";
            default: return "#718096";
        }
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
