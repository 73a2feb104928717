// Ids.cs - objects that move between two captures, for the stable ID test.
// Tracked objects are allocated between fillers of the same size; after the
// first capture the fillers die, so the collector evacuates the sparse
// blocks and the Tracked objects move. Registry.All keeps them in order:
// the test reads an object's place in that array as its payload. Fresh
// objects are allocated after the first capture. The program prints
// "ready 1", waits for a line, churns, prints "ready 2" and waits: "again"
// collects once more (the collector evacuates a block only once a sweep
// counted it sparse) and prints "ready 2" again, any other line exits.
// With "busy" a thread of its own then allocates and collects without a
// pause until the end, so that collections move objects while the module
// captures.
using System;
using System.Threading;

class Tracked { public long Payload; public long Pad; }
class Filler { public long A; public long B; }
class Fresh { public long Payload; }

static class Registry {
  public static Tracked[] All = new Tracked[2000];
  public static Filler[] Fillers = new Filler[2000 * 50];
  public static Fresh[] New;
}

static class Program {
  static volatile bool done;

  // On a thread of its own, so that no stale slot of the main thread's
  // stack (scanned conservatively) keeps the fillers alive later.
  static void Fill() {
    for (int i = 0; i < Registry.All.Length; i++) {
      Registry.All[i] = new Tracked { Payload = i, Pad = -i };
      for (int j = 0; j < 50; j++) Registry.Fillers[i * 50 + j] = new Filler { A = i, B = j };
    }
  }

  // Arrays of another size than Tracked and Filler: they must not fill the
  // holes the dead fillers leave, or no block would be sparse enough to move.
  static void Busy() {
    var ring = new long[4096][];
    for (long i = 0; !done; i++) {
      ring[i & 4095] = new long[8];
      if ((i & 0x3ffff) == 0) GC.Collect();
    }
  }

  // A pause before each collection lets the background sweep of the one
  // before finish, so that the next one knows which blocks are sparse.
  static void Collect() {
    for (int i = 0; i < 3; i++) {
      Thread.Sleep(10);
      GC.Collect();
    }
  }

  static int Main(string[] args) {
    var t = new Thread(Fill);
    t.Start();
    t.Join();
    Console.WriteLine("ready 1");
    Console.ReadLine();
    Thread busy = null;
    if (args.Length > 0 && args[0] == "busy") { busy = new Thread(Busy); busy.Start(); }
    Registry.Fillers = null;
    Collect();
    Registry.New = new Fresh[100];
    for (int i = 0; i < Registry.New.Length; i++) Registry.New[i] = new Fresh { Payload = i };
    Console.WriteLine("ready 2");
    while (Console.ReadLine() == "again") {
      Collect();
      Console.WriteLine("ready 2");
    }
    done = true;
    if (busy != null) busy.Join();
    return 0;
  }
}
