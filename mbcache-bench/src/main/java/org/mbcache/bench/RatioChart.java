package org.mbcache.bench;

import java.util.List;
import java.util.Locale;
import org.mbcache.bench.JmhResults.Row;

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
        StringBuilder bars = new StringBuilder();
        double max = 2.0;
        int n = 0;
        for (List<Row> g : table.groups()) {
            for (Row r : g) {
                double s = ResultTable.speedup(g, r);
                if (!r.backend().equals(Backends.CAFFEINE) && Double.isFinite(s)) {
                    max = Math.max(max, s);
                    n++;
                }
            }
        }
        max = Math.ceil(max * 2) / 2;
        int height = TOP + n * (BAR_H + GAP) + 30;
        int width = LABEL_W + PLOT_W + 80;
        int y = TOP;
        for (List<Row> g : table.groups()) {
            for (Row r : g) {
                double s = ResultTable.speedup(g, r);
                if (r.backend().equals(Backends.CAFFEINE) || !Double.isFinite(s)) {
                    continue;
                }
                String label = r.benchmark() + " t=" + r.threads()
                        + (r.otherParams().isEmpty() ? "" : " " + r.otherParams()) + " " + r.backend();
                double w = s / max * PLOT_W;
                bars.append(String.format(Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>"
                                + "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
                                + "<text x=\"%.1f\" y=\"%d\">%.2f×</text>\n",
                        LABEL_W - 6, y + BAR_H - 3, escape(label),
                        LABEL_W, y, w, BAR_H, color(r.backend()),
                        LABEL_W + w + 4, y + BAR_H - 3, s));
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
            double x = LABEL_W + ref / max * PLOT_W;
            b.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>"
                            + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    x, TOP - 6, x, y, ref == 1.0 ? "black" : "red",
                    x, TOP - 10, ref == 1.0 ? "caffeine 1×" : "target 1.5×"));
        }
        b.append(String.format(Locale.ROOT,
                "<text x=\"10\" y=\"%d\">speed-up over caffeine = caffeine ns/op ÷ backend ns/op (longer is faster)</text>\n",
                y + 20));
        b.append("</svg>\n");
        return b.toString();
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
