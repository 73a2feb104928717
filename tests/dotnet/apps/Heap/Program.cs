// Heap: a .NET program whose own part of the heap is exactly known, for the
// tests of `gcsnap-agent --source dotnet` (tests/dotnet). `Heap --expect`
// prints, as JSON, what a capture of it must find (the tests read that
// rather than repeat it). `Heap` builds that heap, prints "ready PID" and
// then serves lines on stdin: "gc" (a full collection, then "ok"), "quit".
//
// Every object of the HeapTest types is made here and kept alive to the end,
// except the WeakOnly object (only a weak handle holds it: the capture's own
// full collection frees it, so a capture finds none) and the Pending objects
// (unreachable, finalizable: they wait on the finalizer queue because the
// finalizer thread is held in Blocker's finalizer until "quit").
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace HeapTest
{
    class Customer { public int Id; }
    class Order { public int Id; public Customer Customer; }
    class Config { public int Value; }
    class LocalThing { public int Value; }
    class PinnedThing { public int Value; }
    class HandleTarget { public int Value; }
    class WeakShared { public int Value; }
    class WeakOnly { public int Value; }
    class CwtKey { public int Id; }
    class CwtValue { public int Id; }
    class PerThread { public int Value; }

    class Pending
    {
        public int Id;
        ~Pending() { Id = -1; }
    }

    // Its finalizer keeps the finalizer thread until the program ends, so
    // that the Pending objects stay on the finalizer queue, whatever
    // collections happen before a capture.
    class Blocker
    {
        public static readonly ManualResetEventSlim Started = new ManualResetEventSlim();
        public static readonly ManualResetEventSlim Release = new ManualResetEventSlim();
        ~Blocker()
        {
            Started.Set();
            Release.Wait();
        }
    }

    static class Registry
    {
        public static Order[] Orders;
        public static Customer[] Customers;
        public static Config Primary;       // two statics of one type in one class
        public static Config Secondary;
        public static WeakShared Shared;    // also held by a weak handle
        public static CwtKey[] Keys;
        public static ConditionalWeakTable<CwtKey, CwtValue> Table;
        [ThreadStatic] public static PerThread Mine;
    }

    static class Program
    {
        const int Customers = 100, Orders = 1000, Pendings = 3, Keys = 3;
        const int PinnedBytes = 100000;     // over 85,000: on the large object heap

        static int Main(string[] args)
        {
            if (args.Length == 1 && args[0] == "--expect")
            {
                Console.Write(Expect());
                return 0;
            }
            MakeBlocker();
            GC.Collect();
            if (!Blocker.Started.Wait(30000))
            {
                Console.Error.WriteLine("the finalizer thread did not run");
                return 1;
            }
            MakePending();
            GC.Collect();                   // the Pending objects go to the finalizer queue

            Registry.Customers = new Customer[Customers];
            for (int i = 0; i < Customers; i++)
                Registry.Customers[i] = new Customer { Id = i };
            Registry.Orders = new Order[Orders];
            for (int i = 0; i < Orders; i++)
                Registry.Orders[i] = new Order { Id = i, Customer = Registry.Customers[i % Customers] };
            Registry.Primary = new Config { Value = 1 };
            Registry.Secondary = new Config { Value = 2 };
            Registry.Shared = new WeakShared();
            Registry.Keys = new CwtKey[Keys];
            Registry.Table = new ConditionalWeakTable<CwtKey, CwtValue>();
            for (int i = 0; i < Keys; i++)
            {
                Registry.Keys[i] = new CwtKey { Id = i };
                Registry.Table.Add(Registry.Keys[i], new CwtValue { Id = i });
            }
            Registry.Mine = new PerThread();
            GCHandle strong = GCHandle.Alloc(new HandleTarget());
            GCHandle weak = GCHandle.Alloc(Registry.Shared, GCHandleType.Weak);
            GCHandle weakOnly = MakeWeakOnly();
            GCHandle pinned = GCHandle.Alloc(new byte[PinnedBytes], GCHandleType.Pinned);

            int rc = Serve(new LocalThing(), new PinnedThing());

            GC.KeepAlive(Registry.Mine);
            strong.Free();
            weak.Free();
            weakOnly.Free();
            pinned.Free();
            Blocker.Release.Set();
            return rc;
        }

        // The main thread waits here for the whole run: local is a stack
        // root, pinned a pinned interior one (the fixed statement's pointer
        // into the object).
        [MethodImpl(MethodImplOptions.NoInlining)]
        static unsafe int Serve(LocalThing local, PinnedThing pinned)
        {
            int rc = 0;
            fixed (int* p = &pinned.Value)
            {
                Console.WriteLine("ready " + Environment.ProcessId);
                string line;
                while ((line = Console.ReadLine()) != null && line != "quit")
                {
                    if (line == "gc")
                    {
                        GC.Collect();
                        Console.WriteLine("ok");
                    }
                    else
                    {
                        Console.WriteLine("unknown command " + line);
                    }
                    *p += 1;
                }
            }
            GC.KeepAlive(local);
            return rc;
        }

        // Made in their own frames, so that no stack slot of Main holds them.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void MakeBlocker() { new Blocker(); }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void MakePending()
        {
            for (int i = 0; i < Pendings; i++)
                new Pending { Id = i };
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static GCHandle MakeWeakOnly() { return GCHandle.Alloc(new WeakOnly(), GCHandleType.Weak); }

        // What a capture must find, for the tests. "types": exact instance
        // counts. "refs": each object of "from" references "out" distinct
        // objects of "to", and each "to" object is referenced by "in" of
        // them. "roots": some root of that kind (RPM kinds: 1 local,
        // 2 finalizer queue, 3 handle, 4 static) with all the "flags" bits
        // set and none of "not_flags" names an object of "type" (at least
        // "min_size" bytes); a static one names "field" of "class".
        // "cwt": each key references its value (the table's dependent
        // handles, as the runtime reports them), "count" entries.
        static string Expect()
        {
            var s = new StringBuilder();
            s.Append("{\n  \"program\": \"Heap\",\n  \"types\": {\n");
            var types = new (string, int)[] {
                ("HeapTest.Customer", Customers), ("HeapTest.Order", Orders),
                ("HeapTest.Config", 2), ("HeapTest.LocalThing", 1), ("HeapTest.PinnedThing", 1),
                ("HeapTest.HandleTarget", 1), ("HeapTest.WeakShared", 1), ("HeapTest.WeakOnly", 0),
                ("HeapTest.CwtKey", Keys), ("HeapTest.CwtValue", Keys), ("HeapTest.PerThread", 1),
                ("HeapTest.Pending", Pendings), ("HeapTest.Blocker", 1),
                ("HeapTest.Customer[]", 1), ("HeapTest.Order[]", 1), ("HeapTest.CwtKey[]", 1),
            };
            for (int i = 0; i < types.Length; i++)
                s.Append($"    \"{types[i].Item1}\": {types[i].Item2}{(i + 1 < types.Length ? "," : "")}\n");
            s.Append("  },\n  \"refs\": [\n");
            s.Append($"    {{\"from\": \"HeapTest.Order\", \"to\": \"HeapTest.Customer\", \"out\": 1, \"in\": {Orders / Customers}}},\n");
            s.Append($"    {{\"from\": \"HeapTest.Order[]\", \"to\": \"HeapTest.Order\", \"out\": {Orders}, \"in\": 1}},\n");
            s.Append($"    {{\"from\": \"HeapTest.Customer[]\", \"to\": \"HeapTest.Customer\", \"out\": {Customers}, \"in\": 1}},\n");
            s.Append($"    {{\"from\": \"HeapTest.CwtKey[]\", \"to\": \"HeapTest.CwtKey\", \"out\": {Keys}, \"in\": 1}},\n");
            s.Append($"    {{\"from\": \"HeapTest.CwtKey\", \"to\": \"HeapTest.CwtValue\", \"out\": 1, \"in\": 1}}\n");
            s.Append("  ],\n  \"roots\": [\n");
            s.Append("    {\"what\": \"local\", \"kind\": 1, \"flags\": 0, \"not_flags\": 2, \"type\": \"HeapTest.LocalThing\"},\n");
            s.Append("    {\"what\": \"pinned local (fixed)\", \"kind\": 1, \"flags\": 1, \"not_flags\": 2, \"type\": \"HeapTest.PinnedThing\"},\n");
            s.Append($"    {{\"what\": \"finalizer queue\", \"kind\": 2, \"flags\": 0, \"not_flags\": 2, \"type\": \"HeapTest.Pending\", \"count\": {Pendings}}},\n");
            s.Append("    {\"what\": \"strong handle\", \"kind\": 3, \"flags\": 0, \"not_flags\": 3, \"type\": \"HeapTest.HandleTarget\"},\n");
            s.Append("    {\"what\": \"weak handle\", \"kind\": 3, \"flags\": 2, \"not_flags\": 0, \"type\": \"HeapTest.WeakShared\"},\n");
            s.Append($"    {{\"what\": \"pinned handle on the large array\", \"kind\": 3, \"flags\": 1, \"not_flags\": 2, \"type\": \"System.Byte[]\", \"min_size\": {PinnedBytes}}},\n");
            string[,] statics = {
                { "Orders", "HeapTest.Order[]" }, { "Customers", "HeapTest.Customer[]" },
                { "Primary", "HeapTest.Config" }, { "Secondary", "HeapTest.Config" },
                { "Shared", "HeapTest.WeakShared" }, { "Keys", "HeapTest.CwtKey[]" },
            };
            for (int i = 0; i < statics.GetLength(0); i++)
                s.Append($"    {{\"what\": \"static\", \"kind\": 4, \"flags\": 0, \"not_flags\": 2, \"type\": \"{statics[i, 1]}\", " +
                         $"\"class\": \"HeapTest.Registry\", \"field\": \"{statics[i, 0]}\"}}{(i + 1 < statics.GetLength(0) ? "," : "")}\n");
            s.Append("  ],\n");
            s.Append($"  \"cwt\": {{\"key\": \"HeapTest.CwtKey\", \"value\": \"HeapTest.CwtValue\", \"count\": {Keys}}},\n");
            s.Append("  \"thread_static\": {\"class\": \"HeapTest.Registry\", \"field\": \"Mine\", \"type\": \"HeapTest.PerThread\"}\n");
            s.Append("}\n");
            return s.ToString();
        }
    }
}
