// Contacts.cs - the demo application of the main job: a device-style
// contacts app with a slow leak. Every tick it opens a contact's detail
// view, which subscribes to the address book's Changed event and is never
// unsubscribed, so every view ever opened stays reachable from the static
// event: the leak `gcsnap trend` finds, with its path from the static root.
// A bounded cache of thumbnails and short-lived strings are the rest of
// the heap. Runs until it is stopped (SIGTERM, Ctrl-C); the argument is the
// tick in milliseconds (default 20).
using System;
using System.Collections.Generic;
using System.Threading;

class Contact {
  public string Name, Phone;
  public Contact(int i) { Name = "Contact " + i; Phone = "+1-555-" + (1000 + i % 9000); }
}

static class AddressBook {
  public static readonly List<Contact> Contacts = new List<Contact>();
  public static event EventHandler Changed;
  public static void Touch() { var h = Changed; if (h != null) h(null, EventArgs.Empty); }
}

class DetailView {
  readonly Contact contact;
  readonly char[] layout = new char[64];
  int refreshes;
  public DetailView(Contact c) {
    contact = c;
    AddressBook.Changed += OnChanged;     // the leak: never removed
  }
  void OnChanged(object sender, EventArgs e) { refreshes++; }
  public string Render() { return contact.Name + " " + contact.Phone + " " + refreshes + layout.Length; }
}

static class ThumbnailCache {
  static readonly Dictionary<int, byte[]> cache = new Dictionary<int, byte[]>();
  static readonly Queue<int> order = new Queue<int>();
  public static byte[] Get(int id) {
    byte[] t;
    if (cache.TryGetValue(id, out t)) return t;
    t = new byte[512];
    cache[id] = t;
    order.Enqueue(id);
    if (order.Count > 200) cache.Remove(order.Dequeue());
    return t;
  }
}

static class Program {
  static int Main(string[] args) {
    int tickMs = args.Length > 0 ? int.Parse(args[0]) : 20;
    for (int i = 0; i < 5000; i++) AddressBook.Contacts.Add(new Contact(i));
    Console.WriteLine("ready");
    int tick = 0;
    long rendered = 0;
    for (;;) {
      var c = AddressBook.Contacts[(tick * 7919) % AddressBook.Contacts.Count];
      for (int v = 0; v < 10; v++) {
        var view = new DetailView(c);
        rendered += view.Render().Length;
        ThumbnailCache.Get((tick * 31 + v) % 1000);
      }
      if (tick % 50 == 0) AddressBook.Touch();
      tick++;
      Thread.Sleep(tickMs);
      if (rendered < 0) return 1;
    }
  }
}
