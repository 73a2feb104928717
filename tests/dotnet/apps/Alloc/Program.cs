// Alloc N: N small objects linked forwards, backwards and at random (a
// fixed seed), for the scale tests and the benchmark of
// `gcsnap-agent --source dotnet`. Prints "ready PID", then serves lines on
// stdin: "gc" (a full collection, then "ok"), "pause" (the time the
// program was paused by collections since it started, in microseconds:
// "pause US"), "quit".
using System;

namespace AllocTest
{
    class Node
    {
        public Node Next;       // the node made after this one: a forward reference
        public Node Prev;       // the one before: backward
        public Node Other;      // anywhere
        public int Index;
    }

    static class Program
    {
        static Node[] all;
        static readonly System.Collections.Generic.List<Node> grown = new System.Collections.Generic.List<Node>();

        static int Main(string[] args)
        {
            int n;
            if (args.Length != 1 || !int.TryParse(args[0], out n) || n < 1)
            {
                Console.Error.WriteLine("usage: Alloc N");
                return 2;
            }
            all = new Node[n];
            for (int i = 0; i < n; i++)
                all[i] = new Node { Index = i };
            var rng = new Random(12345);
            for (int i = 0; i < n; i++)
            {
                all[i].Next = all[(i + 1) % n];
                all[i].Prev = all[(i + n - 1) % n];
                all[i].Other = all[rng.Next(n)];
            }
            Console.WriteLine("ready " + Environment.ProcessId);
            string line;
            while ((line = Console.ReadLine()) != null && line != "quit")
            {
                if (line == "gc")
                {
                    GC.Collect();
                    Console.WriteLine("ok");
                }
                else if (line == "pause")
                {
                    Console.WriteLine("pause " + GC.GetTotalPauseDuration().Ticks / 10);
                }
                else if (line.StartsWith("grow ") && int.TryParse(line.Substring(5), out int more))
                {
                    for (int i = 0; i < more; i++)
                        grown.Add(new Node { Index = i, Prev = grown.Count > 0 ? grown[grown.Count - 1] : null });
                    Console.WriteLine("ok");
                }
                else
                {
                    Console.WriteLine("unknown command " + line);
                }
            }
            GC.KeepAlive(all);
            return 0;
        }
    }
}
