// Key popularity of YCSB 0.17.0's own generators (bench/compare-ycsb-keys.sh), built against its
// core jar: draws DRAWS record numbers as CoreWorkload's nextKeynum does for a phase without
// inserts over RECORDS records, and prints the share on the hottest 1% and 10% of the records.
import java.util.Arrays;
import site.ycsb.generator.CounterGenerator;
import site.ycsb.generator.ExponentialGenerator;
import site.ycsb.generator.HotspotIntegerGenerator;
import site.ycsb.generator.NumberGenerator;
import site.ycsb.generator.ScrambledZipfianGenerator;
import site.ycsb.generator.SkewedLatestGenerator;
import site.ycsb.generator.UniformLongGenerator;

public final class KeyShares {
  public static void main(String[] args) {
    String dist = args[0];
    int records = Integer.parseInt(args[1]);
    long draws = Long.parseLong(args[2]);
    long last = records - 1;
    NumberGenerator g;
    switch (dist) {
      case "uniform": g = new UniformLongGenerator(0, records - 1); break;
      case "zipfian": g = new ScrambledZipfianGenerator(0, records); break;
      case "latest": g = new SkewedLatestGenerator(new CounterGenerator(records)); break;
      case "hotspot": g = new HotspotIntegerGenerator(0, records - 1, 0.2, 0.8); break;
      case "exponential": g = new ExponentialGenerator(95, records * 0.8571428571); break;
      default: throw new IllegalArgumentException(dist);
    }
    long[] counts = new long[records];
    for (long i = 0; i < draws; i++) {
      long k;
      do {
        long v = g.nextValue().longValue();
        k = dist.equals("exponential") ? last - v : v;
      } while (k > last || k < 0);
      counts[(int) k]++;
    }
    Arrays.sort(counts);
    double top1 = 0, top10 = 0;
    int n1 = (int) Math.max(1, Math.ceil(records * 0.01));
    int n10 = (int) Math.max(1, Math.ceil(records * 0.10));
    for (int i = 0; i < n10; i++) {
      long c = counts[records - 1 - i];
      if (i < n1) {
        top1 += c;
      }
      top10 += c;
    }
    System.out.printf("%.4f %.4f%n", top1 / draws, top10 / draws);
  }
}
