// Domains.cs - objects in two AppDomains: the main one holds 500 MainItem,
// a second one, "Plugin", 1000 PluginItem in a static list of its own. It
// prints "ready", then exits on a line on standard input.
using System;
using System.Collections.Generic;

class MainItem { public int Value; }

class PluginItem { public int Value; }

public class Plugin : MarshalByRefObject {
  static List<PluginItem> items;

  public int Load(int n) {
    items = new List<PluginItem>();
    for (int i = 0; i < n; i++) items.Add(new PluginItem { Value = i });
    return AppDomain.CurrentDomain.Id;
  }
}

static class Program {
  static MainItem[] items;

  static int Main() {
    items = new MainItem[500];
    for (int i = 0; i < items.Length; i++) items[i] = new MainItem { Value = i };
    AppDomain plugin = AppDomain.CreateDomain("Plugin");
    var p = (Plugin)plugin.CreateInstanceAndUnwrap(typeof(Plugin).Assembly.FullName, "Plugin");
    if (p.Load(1000) == AppDomain.CurrentDomain.Id) return 1;
    Console.WriteLine("ready");
    Console.ReadLine();
    GC.KeepAlive(items);
    GC.KeepAlive(plugin);
    return 0;
  }
}
