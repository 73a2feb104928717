// Roots.cs - a program with one of every kind of root, for the tests of the
// gcsnap profiler module. It prints "ready" when its heap is set up, then
// waits for a line on standard input and exits. The counts of its own
// types are fixed: Node 5, Local 3, Pending 3, Blocker 1, Cycle 2,
// HandleTarget 1, WeakTarget 1, Registry's statics below.
using System;
using System.Runtime.InteropServices;
using System.Threading;

class Node { public Node Next; public int Value; }
class Local { public string Name; }
class Cycle { public Cycle Other; }
class HandleTarget { public int Value; }
class WeakTarget { public int Value; }

// Its finalizer blocks the finalizer thread, so the Pending objects stay in
// the finalizer queue: roots of kind 2.
class Blocker {
  public static readonly ManualResetEvent Started = new ManualResetEvent(false);
  public static readonly ManualResetEvent Release = new ManualResetEvent(false);
  ~Blocker() { Started.Set(); Release.WaitOne(); }
}
class Pending { ~Pending() { } }

static class Registry {
  public static Node Head;                  // a list of 5 Nodes
  public static Cycle Loop;                 // two Cycles referencing each other
  public static WeakTarget Strong;          // also the target of weak handles
  public static int[] Numbers = new int[10];
  public static object[] Mixed = new object[3];
  public static byte[] Large = new byte[100000];   // over 85,000 bytes
  public static string Literal = "gcsnap-literal";
}

static class Program {
  static GCHandle normal, weak, weakTrack, pinned;

  [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
  static void DropBlocker() { new Blocker(); }

  [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
  static void DropPending() { for (int i = 0; i < 3; i++) new Pending(); }

  static void RunOnThread(ThreadStart f) {
    var t = new Thread(f);
    t.Start();
    t.Join();
  }

  static void Setup() {
    for (int i = 0; i < 5; i++) Registry.Head = new Node { Next = Registry.Head, Value = i };
    Registry.Loop = new Cycle();
    Registry.Loop.Other = new Cycle { Other = Registry.Loop };
    Registry.Strong = new WeakTarget { Value = 7 };
    Registry.Mixed[0] = Registry.Numbers;
    Registry.Mixed[1] = String.Intern(new string('q', 12));
    Registry.Mixed[2] = Registry.Literal;
    normal = GCHandle.Alloc(new HandleTarget { Value = 1 }, GCHandleType.Normal);
    weak = GCHandle.Alloc(Registry.Strong, GCHandleType.Weak);
    weakTrack = GCHandle.Alloc(Registry.Strong, GCHandleType.WeakTrackResurrection);
    pinned = GCHandle.Alloc(new byte[64], GCHandleType.Pinned);
  }

  static int Main() {
    Setup();
    // The finalizer thread takes the Blocker first and stays in its
    // finalizer; the Pending objects collected after it wait in the queue.
    // On their own threads, so that no stale stack slot of this thread
    // keeps them alive (the stacks are scanned conservatively).
    RunOnThread(DropBlocker);
    GC.Collect();
    if (!Blocker.Started.WaitOne(60000)) { Console.Error.WriteLine("no finalizer ran"); return 1; }
    RunOnThread(DropPending);
    GC.Collect();
    var a = new Local { Name = "a" };
    var b = new Local { Name = "b" };
    var c = new Local { Name = "c" };
    Console.WriteLine("ready");
    Console.Out.Flush();
    Console.ReadLine();
    GC.KeepAlive(a);
    GC.KeepAlive(b);
    GC.KeepAlive(c);
    Blocker.Release.Set();
    normal.Free();
    weak.Free();
    weakTrack.Free();
    pinned.Free();
    return 0;
  }
}
