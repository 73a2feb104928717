// Churn.cs - a heap of N small objects (argument, default 100000) in
// arrays of 1000, for the benchmark; with "keep" the program then
// allocates garbage in a loop, so that captures meet a running program.
// It prints "ready", waits for a line on standard input and exits.
using System;
using System.Threading;

class Item { public Item Next; public long Value; }

static class Program {
  static Item[][] heap;
  static volatile bool done;

  static void Churn() {
    while (!done) { var x = new Item[16]; x[0] = new Item(); Thread.Sleep(0); }
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
    Console.ReadLine();
    done = true;
    if (t != null) t.Join();
    return 0;
  }
}
