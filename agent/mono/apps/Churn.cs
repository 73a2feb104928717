// Churn.cs - a heap of N small objects (argument, default 100000) in
// arrays of 1000, for the benchmark and the tests. It prints "ready", then
// reads commands, one a line: "alloc K" allocates K small objects into a
// ring of 65536, so that many outlive a nursery collection and are
// promoted (moved), and prints "alloc MS", the milliseconds it took;
// anything else ends the program. With "keep" it also allocates garbage
// on a thread of its own meanwhile, so that captures meet a running program.
using System;
using System.Threading;

class Item { public Item Next; public long Value; }

static class Program {
  static Item[][] heap;
  static volatile bool done;

  static void Churn() {
    while (!done) { var x = new Item[16]; x[0] = new Item(); Thread.Sleep(0); }
  }

  static long Alloc(int k) {
    var ring = new Item[1 << 16];
    DateTime t0 = DateTime.UtcNow;
    for (int i = 0; i < k; i++) ring[i & 0xffff] = new Item { Value = i };
    return (long)(DateTime.UtcNow - t0).TotalMilliseconds;
  }

  static int Main(string[] args) {
    int n = args.Length > 0 ? int.Parse(args[0]) : 100000;
    heap = new Item[(n + 999) / 1000][];
    for (int i = 0; i < heap.Length; i++) {
      heap[i] = new Item[1000];
      for (int j = 0; j < 1000 && i * 1000 + j < n; j++)
        heap[i][j] = new Item { Next = j > 0 ? heap[i][j - 1] : null, Value = j };
    }
    Thread t = null;
    if (args.Length > 1 && args[1] == "keep") { t = new Thread(Churn); t.Start(); }
    Console.WriteLine("ready");
    string line;
    while ((line = Console.ReadLine()) != null && line.StartsWith("alloc "))
      Console.WriteLine("alloc " + Alloc(int.Parse(line.Substring(6))));
    done = true;
    if (t != null) t.Join();
    return 0;
  }
}
