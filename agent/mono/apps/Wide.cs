// Wide.cs - one array of N references (argument), for the tests of object
// records longer than a line may be elsewhere. Its elements name 16 small
// objects in turn. It prints "ready", then exits on a line on standard input.
using System;

class Leaf { public int Value; }

static class Program {
  static object[] wide;

  static int Main(string[] args) {
    int n = int.Parse(args[0]);
    var leaves = new Leaf[16];
    for (int i = 0; i < leaves.Length; i++) leaves[i] = new Leaf { Value = i };
    wide = new object[n];
    for (int i = 0; i < n; i++) wide[i] = leaves[i & 15];
    Console.WriteLine("ready");
    Console.ReadLine();
    GC.KeepAlive(wide);
    return 0;
  }
}
