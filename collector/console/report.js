/* report.js - the script of the page gcsnap report writes, inlined into it:
 * sortable, filterable tables drawn a page at a time from the JSON island,
 * with textContent only, so no name from the dump is ever markup. */
(function(){'use strict';
var data=JSON.parse(document.getElementById('gcsnap-data').textContent);
var PAGE=100;
function fmt(v,signed){if(typeof v!=='number')return String(v);var s=Math.abs(v).toLocaleString('en-US');return (v<0?'-':signed&&v>0?'+':'')+s;}
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!==undefined)e.textContent=text;return e;}
function grid(box,rows,cols,key,desc){
 var st={key:key,desc:desc,filter:'',page:0,view:rows};
 var tools=el('div','tools'),input=el('input');input.type='search';input.placeholder='Filter by type name';input.setAttribute('aria-label','Filter by type name');
 var info=el('span','muted');tools.appendChild(input);tools.appendChild(info);
 var table=el('table'),head=table.createTHead().insertRow(),body=table.createTBody();
 var pager=el('div','pager'),prev=el('button',null,'Previous'),next=el('button',null,'Next'),where=el('span');
 pager.appendChild(prev);pager.appendChild(where);pager.appendChild(next);
 cols.forEach(function(c){var th=el('th',c.num?'n':'',c.label);th.title='Sort by '+c.label;th.addEventListener('click',function(){if(st.key===c.key)st.desc=!st.desc;else{st.key=c.key;st.desc=!!c.num;}sort();draw();});c.th=th;head.appendChild(th);});
 function sort(){var k=st.key,d=st.desc?-1:1;st.view=st.view.slice().sort(function(a,b){var x=a[k],y=b[k];if(x===y)return a.type<b.type?-1:a.type>b.type?1:0;return (x<y?-1:1)*d;});st.page=0;}
 function filter(){var f=st.filter.toLowerCase();st.view=f?rows.filter(function(r){return String(r.type).toLowerCase().indexOf(f)>=0;}):rows;sort();draw();}
 function draw(){var n=st.view.length,pages=Math.max(1,Math.ceil(n/PAGE));if(st.page>=pages)st.page=pages-1;var a=st.page*PAGE,b=Math.min(n,a+PAGE);
  body.textContent='';for(var i=a;i<b;i++){var r=st.view[i],tr=body.insertRow();cols.forEach(function(c){var td=tr.insertCell();if(c.num)td.className='n';if(c.render)c.render(td,r);else td.textContent=c.num?fmt(r[c.key],c.signed):r[c.key];});}
  cols.forEach(function(c){c.th.className=(c.num?'n ':'')+(c.key===st.key?'sorted'+(st.desc?'':' asc'):'');});
  info.textContent=' '+n.toLocaleString('en-US')+' of '+rows.length.toLocaleString('en-US')+' types';
  where.textContent=n?('rows '+(a+1)+'-'+b+' of '+n+', page '+(st.page+1)+' of '+pages):'no rows';
  prev.disabled=st.page===0;next.disabled=st.page>=pages-1;}
 var timer;input.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(function(){st.filter=input.value;filter();},150);});
 prev.addEventListener('click',function(){st.page--;draw();});next.addEventListener('click',function(){st.page++;draw();});
 box.textContent='';box.appendChild(tools);box.appendChild(table);box.appendChild(pager);sort();draw();}
function typeCell(td,r){td.className='t';td.textContent=r.type;}
/* The dominator tree embedded to a bounded depth: a row opens to the children kept. */
function tree(box,sec){
 var total=sec.reachable_bytes||0,table=el('table','domtree'),head=table.createTHead().insertRow(),body=table.createTBody();
 ['','Retained','Share %','Own size','Type','Object'].forEach(function(x,i){head.appendChild(el('th',i>=1&&i<=3?'n':'',x));});
 function more(n,depth,shown){var tr=el('tr','more'),td=tr.insertCell();td.colSpan=6;td.style.paddingLeft=(4+depth*16)+'px';td.textContent=fmt(n.children-shown)+' more, smaller, not in this page';tr.setAttribute('data-depth',String(depth));return tr;}
 function row(n,depth){var tr=el('tr'),td=tr.insertCell();tr.setAttribute('data-depth',String(depth));tr.setAttribute('data-id',n.id);tr.setAttribute('data-retained',String(n.retained));
  td.style.paddingLeft=(4+depth*16)+'px';
  if(n.kids.length){var b=el('button','expand','\u25B8');b.type='button';b.addEventListener('click',function(){flip(tr,b,n,depth);});td.appendChild(b);}
  else if(n.children)td.appendChild(el('span','muted','\u2026'));
  [fmt(n.retained),(total?100*n.retained/total:0).toFixed(2),fmt(n.shallow)].forEach(function(v){var c=tr.insertCell();c.className='n';c.textContent=v;});
  var t=tr.insertCell();t.className='t';t.textContent=n.type;tr.insertCell().textContent=n.id;return tr;}
 function flip(tr,b,n,depth){var open=tr.classList.toggle('open');b.textContent=open?'\u25BE':'\u25B8';
  if(!open){var x=tr.nextSibling;while(x&&+x.getAttribute('data-depth')>depth){var y=x.nextSibling;x.remove();x=y;}return;}
  var frag=document.createDocumentFragment();n.kids.forEach(function(k){frag.appendChild(row(k,depth+1));});
  if(n.children>n.kids.length)frag.appendChild(more(n,depth+1,n.kids.length));body.insertBefore(frag,tr.nextSibling);}
 sec.root.kids.forEach(function(k){body.appendChild(row(k,0));});
 if(sec.root.children>sec.root.kids.length)body.appendChild(more(sec.root,0,sec.root.kids.length));
 box.appendChild(el('h3',null,sec.name));box.appendChild(table);}
var treeBox=document.querySelector('#domtree .tree');
if(treeBox&&data.tree)data.tree.sections.forEach(function(sec){tree(treeBox,sec);});
var boxes=document.querySelectorAll('.grid');
grid(boxes[0],data.summary.by_type,[{key:'type',label:'Type',render:typeCell},{key:'count',label:'Objects',num:1},{key:'bytes',label:'Bytes',num:1},{key:'percent',label:'Share %',num:1}],'bytes',true);
if(data.diff)grid(boxes[1],data.diff.types,[{key:'status',label:'Status',render:function(td,r){if(r.status==='new'||r.status==='gone')td.appendChild(el('span','badge '+r.status,r.status));}},{key:'type',label:'Type',render:typeCell},{key:'count_before',label:'Objects before',num:1},{key:'count_after',label:'Objects after',num:1},{key:'count_change',label:'Change',num:1,signed:1},{key:'bytes_before',label:'Bytes before',num:1},{key:'bytes_after',label:'Bytes after',num:1},{key:'bytes_change',label:'Change',num:1,signed:1,render:function(td,r){td.className='n '+(r.bytes_change>0?'up':r.bytes_change<0?'down':'');td.textContent=fmt(r.bytes_change,true);}}],'bytes_change',true);
})();
